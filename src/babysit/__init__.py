"""babysit: babysits large ML training runs so that nobody has to.

    babysit run --checkpoint 'out/ckpt_*.pt' -- python train.py

The package never imports torch. See DESIGN.md for the shape: sources -> parse -> detect ->
policy -> act, with the store in the middle and views reading only the store.
"""

__version__ = "0.1.0"
