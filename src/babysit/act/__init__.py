"""act: side effects on the world (start, signal and kill processes). Behind small seams."""
