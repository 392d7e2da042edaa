"""What a Python traceback's frames say the run was doing where it raised: its frames read from
the log's lines, and whether the innermost ones waited, wrote a file, allocated device memory,
sent a request, read a sample, or started a spawned process. Pure functions; standins.py and
cuts.py pick a stand-in rule from them.

    where = frames(traceback_lines)  # [(file, function, code line)], innermost last
    cut_wait(where), cut_write(where), cut_alloc(where), cut_net(where), cut_compile(where),
    printed(where), writing(where)
    cut_raise("assert pg is not None", "__init__")  # -> "AssertionError: assert pg is not None"
"""

from __future__ import annotations

import re

# The statement a traceback cut before its exception line ended in says what it raised: an
# `assert` an AssertionError, `raise X(...)` an X, an import in a module's body an ImportError.
_CUT_RAISES = (
    (re.compile(r"^assert\b"), "AssertionError"),
    (re.compile(r"^raise\s+(?:[A-Za-z_]\w*\.)*(?P<exc>[A-Z]\w*(?:Error|Exception))\b"), ""),
    (re.compile(r"^(?:from\s+[\w.]+\s+import\b|import\s+[\w.]+)"), "ImportError"),
)


def cut_raise(code: str, func: str | None) -> str | None:
    """What the innermost statement of a cut traceback raised, as an exception line for the
    rules (`AssertionError: assert pg is not None`), or None when the statement does not say."""
    for rx, exc in _CUT_RAISES:
        m = rx.match(code)
        if m is None or (exc == "ImportError" and func != "<module>"):
            continue
        return f"{exc or m['exc']}: {code}"
    return None


# A traceback's frame: its file, its function (none for a SyntaxError's), its code line.
Frame = tuple[str, str | None, str]
# A traceback's frame line: `  File "train.py", line 88, in train_step` (no `in` for a
# SyntaxError).
FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')


def frames(lines: list[tuple[int, str]]) -> list[Frame]:
    """A traceback's frames from its (line number, text) lines, innermost last."""
    out: list[Frame] = []
    for _, text in lines:
        m = FRAME.match(text)
        if m:
            out.append((m["file"], m["func"], ""))
        elif out and not out[-1][2]:
            out[-1] = (*out[-1][:2], text.strip())
    return out


# A function that blocks (a `get` only in a queue's module: `requests.get`, a dict's `.get` are
# no waits), or a code line that calls one on a queue, a pipe, a process, a thread, a future.
# Not a GPU's synchronize: a busy training loop sits there too.
_WAIT_FUNC = re.compile(r"^_*(?:wait\w*|acquire|recv\w*|poll|select|join|sleep|barrier|result)$")
_QUEUE_FILE = re.compile(r"[/\\]queues?\.py$")
_WAIT_CODE = re.compile(
    r"(?:queue|\bq)\.get\(|"
    r"\.(?:join|wait|acquire|_?recv(?:_bytes)?|_?poll|select|result)\(|"
    r"\btime\.sleep\(|^(?:if not |return |res = |ready = )?(?:wait|select)\("
)
# A launcher's parent waits for its children whether they work or hang (torch.multiprocessing's
# spawn joining them, torchrun's agent, accelerate's and DeepSpeed's launchers): its wait, a few
# frames below the launcher's own, says nothing of the run.
_LAUNCHER_FILE = re.compile(
    r"[/\\]torch[/\\]multiprocessing[/\\]spawn\.py$|[/\\]torch[/\\]distributed[/\\]"
    r"(?:elastic[/\\]|run\.py$|launch\.py$)|[/\\]accelerate[/\\]commands[/\\]|"
    r"[/\\]deepspeed[/\\]launcher[/\\]"
)


def cut_wait(frames: list[Frame]) -> bool:
    """Whether a traceback's innermost frame waited (one cut before its error line, or ended
    by a Ctrl-C), and not in a launcher's join."""
    if not frames or any(_LAUNCHER_FILE.search(f) and fn != "_wrap" for f, fn, _ in frames[-4:]):
        return False  # (spawn's `_wrap` is a spawned child's own entry, not its parent's join)
    file, func, _ = frames[-1]
    if func == "get" and _QUEUE_FILE.search(file):
        return True
    return _does(frames[-1], _WAIT_FUNC, _WAIT_CODE)


# A function named for the write it does (`save`, `_legacy_save`, `save_checkpoint`,
# `write_table`), not one that also does something else first (`_train_and_save`); or the file
# system's own operations on a path, in the modules that do them (shutil's `rmtree`,
# `copyfile`, `move`; os's `makedirs`, `remove`, `rename`, `replace`; pathlib's), which fail on a
# read-only, full or vanished mount (not a hook's `remove`, a dataclass's `replace`).
_WRITE_FUNC = re.compile(
    r"(?i)^_*(?:legacy_)?(?:save|write|dump|upload|serialize|persist|flush)(?:_|$)"
)
_FS_FUNC = re.compile(
    r"^(?:rmtree|copyfile|copytree|copy2?|move|makedirs|mkdir|unlink|remove|rename|replace|"
    r"rmdir|touch|write_bytes|write_text)$"
)
_FS_FILE = re.compile(r"[/\\](?:os|shutil|pathlib|genericpath|posixpath|ntpath)\.py$")
_WRITE_CODE = re.compile(
    r"(?i)\b(?:torch|np|numpy|jnp|tf\.io|joblib|pickle)\.(?:save|dump)\w*\(|"
    r"\b_?(?:legacy_)?save(?:_checkpoint|_model|_state|_pretrained|_weights|_network|_file)?\(|"
    r"\.(?:write|flush|save_pretrained|save_state|save_checkpoint|upload\w*)\(|"
    r"\bshutil\.(?:rmtree|copy\w*|move)\(|"
    r"\bos\.(?:makedirs|mkdir|remove|unlink|rename|replace|rmdir)\("
)


def cut_write(frames: list[Frame]) -> bool:
    """Whether a cut traceback's two innermost frames were writing a checkpoint or file, or
    changing the file system (removing, moving, making a directory)."""
    return any(
        _does(f, _WRITE_FUNC, _WRITE_CODE)
        or bool(f[1] and _FS_FUNC.match(f[1]) and _FS_FILE.search(f[0]))
        for f in frames[-2:]
    )


# A file opened for writing, appending or creating (`open(path, "w")`, `open(p, mode="wb")`,
# `builtins.open(filename, "w+b")` in PIL's save).
_OPEN_TO_WRITE = re.compile(r"""\bopen\([^\n]*?,\s*(?:mode\s*=\s*)?f?['"][wax]""")


def writing(frames: list[Frame]) -> bool:
    """Whether an exception was raised writing a file: cut_write's frames, or an `open` for
    writing in the innermost frame's code."""
    return cut_write(frames) or bool(frames and _OPEN_TO_WRITE.search(frames[-1][2]))


# A write to the terminal the process prints to: a `print(...)` (not one given a file of its own,
# but for sys.stdout or sys.stderr; the builtin a wrapper keeps, as DeiT's and DETR's master-only
# print does: `builtin_print(*args, **kwargs)`), a write or flush of sys.stdout or sys.stderr or
# of a tee logger's terminal (`self.terminal.write(message)`), or tqdm's redraw of its bar (its
# `fp.write(...)`, `fp_flush()` in tqdm's own modules).
_PRINT_CODE = re.compile(
    r"^(?:\w+ = )?(?:builtins\.|__builtin__\.|builtin_)?print\("
    r"(?![^\n]*\bfile\s*=(?!\s*sys\.std(?:out|err)\b))|"
    r"\bsys\.(?:stdout|stderr|__stdout__|__stderr__)\.(?:write|flush)\(|"
    r"\bself\.(?:terminal|stdout|console)\.(?:write|flush)\("
)
_TQDM_FILE = re.compile(r"[/\\]tqdm[/\\]\w+\.py$")
_TQDM_CODE = re.compile(r"\bfp(?:_flush)?\b[^\n]*\(|\.(?:write|flush)\(")


def printed(frames: list[Frame]) -> bool:
    """Whether a traceback's innermost frame wrote to the process's terminal (a print, a write
    to sys.stdout or sys.stderr, tqdm redrawing its bar)."""
    if not frames:
        return False
    file, _, code = frames[-1]
    if _PRINT_CODE.search(code):
        return True
    return bool(_TQDM_FILE.search(file) and _TQDM_CODE.search(code))


# torch.compile's compiler at work (TorchInductor, its Triton kernels' compile workers, Dynamo's
# graph capture, Triton's own compiler), as a traceback's innermost frame. Not what runs the
# compiled model: Dynamo's frame around every call of it (eval_frame.py, external_utils.py),
# Inductor's runtime launching a kernel (`triton_heuristics.py ... in run`: `return launcher(`),
# Triton's driver; Inductor's runtime module compiles too (`_precompile_worker`), by its name.
_COMPILE_FILE = re.compile(
    r"[/\\]torch[/\\](?:_inductor|_dynamo)[/\\]|"
    r"[/\\]triton[/\\](?:compiler[/\\]|backends[/\\]\w+[/\\]compiler\.py$)"
)
_RUNTIME_FILE = re.compile(
    r"[/\\]_dynamo[/\\](?:eval_frame|external_utils)\.py$|[/\\]_inductor[/\\]runtime[/\\]"
)


def cut_compile(frames: list[Frame]) -> bool:
    """Whether a cut traceback's innermost frame is torch.compile's compiler (or Triton's), not
    the compiled model's run."""
    if not frames:
        return False
    file, func, _ = frames[-1]
    if not _COMPILE_FILE.search(file):
        return False
    return not _RUNTIME_FILE.search(file) or "compile" in (func or "")


# A module that allocates device memory (vLLM's `device_allocator/cumem.py`, a framework's
# `caching_allocator.py`), or a function that maps memory back or wakes an engine that does.
_ALLOC_FILE = re.compile(
    r"(?i)[/\\](?:device_allocator[/\\]\w+|(?:\w*_)?alloc(?:ator)?(?:_\w*)?)\.py$"
)
_ALLOC_FUNC = re.compile(r"^_*(?:wake_up|create_and_map|\w*malloc\w*)$")
# vLLM's engine sizing and allocating its KV cache at start-up (`_initialize_kv_caches`,
# `initialize_cache`, `determine_num_available_blocks`), where its out-of-memory errors come:
# in vLLM's own modules (a model's `initialize_cache` elsewhere is a decoder's, Flax's).
_KV_FUNC = re.compile(
    r"^_*(?:initiali[sz]e_kv_caches?|initialize_cache|allocate_kv_cache\w*|"
    r"determine_num_available_blocks)$"
)
_VLLM_FILE = re.compile(r"[/\\]vllm[/\\]")


def cut_alloc(frames: list[Frame]) -> bool:
    """Whether a cut traceback's innermost frame allocates device memory (an allocator's
    module, or a function that maps memory back)."""
    if not frames:
        return False
    file, func, _ = frames[-1]
    if _ALLOC_FILE.search(file) or (func and _ALLOC_FUNC.match(func)):
        return True
    return bool(func and _KV_FUNC.match(func) and _VLLM_FILE.search(file))


# A traceback the log cuts before its error line, raised while the run talked to a server: an
# HTTP client's or a socket's module (requests, urllib3, http.client, aiohttp, httpx, grpc, the
# clouds' SDKs, torch's rendezvous creating its store), or a code line that sends a request.
# The error it hides is most often the network's (a timeout, a refused or dropped connection, a
# server's 5xx).
_NET_FILE = re.compile(
    r"[/\\](?:requests|urllib3|httpx|httpcore|aiohttp|grpc|botocore|boto3|websocket|"
    r"websockets)[/\\]|[/\\](?:http[/\\]client|socket|ssl|urllib[/\\]request)\.py$|"
    r"[/\\](?:rest_utils|rest_store|_http|http_client)\.py$|"
    # torch's rendezvous, creating the store (binding or reaching MASTER_ADDR:MASTER_PORT)
    r"[/\\]torch[/\\]distributed[/\\]rendezvous\.py$"
)
# (not a bare `connect`: sqlite3's, a pipe's; not multiprocessing's connection.py)
_NET_FUNC = re.compile(
    r"^_*(?:urlopen|http_request|call_endpoint|make_request|send_request|getresponse|"
    r"create_connection)$"
)
_NET_CODE = re.compile(
    r"\brequests\.(?:get|post|put|head|request)\(|\burlopen\(|\.getresponse\(|"
    r"\b(?:http_)?request\(|\bcall_endpoint\(|\bsock(?:et)?\.connect\(|"
    # (a response's check of its status: the server answered with an error, W&B's file stream)
    r"\bcreate_connection\(|\.raise_for_status\("
)


def cut_net(frames: list[Frame]) -> bool:
    """Whether a cut traceback's innermost frame is in a network client's module, or one of its
    two innermost frames sends a request (not a server's handler calling the code: a frame of
    grpc's server above the innermost)."""
    if frames and _NET_FILE.search(frames[-1][0]):
        return True
    return any(_does(f, _NET_FUNC, _NET_CODE) for f in frames[-2:])


def _does(frame: Frame, func_rx: re.Pattern[str], code_rx: re.Pattern[str]) -> bool:
    """Whether a frame's function is named for what `func_rx` says, or its code line calls it."""
    _, func, code = frame
    return bool((func and func_rx.search(func)) or code_rx.search(code))


# The error a data pipeline raised on a sample, outside a DataLoader worker: the innermost frame
# is in a library that reads or decodes samples (webdataset, HF datasets, pyarrow, PIL, ...) or
# in the dataset code itself (a dataset, data-loader or reader module, or the `data_utils.py` that
# holds the datasets of VITS and its descendants, and the data generators of Keras-era repos; not
# `metadata_utils.py`, nor Keras' own `keras/utils/data_utils.py`, which downloads files); a
# generic exception there (a missing key, a bad value, an index out of range) is about the data,
# as in a worker.
_DATA_FILE = re.compile(
    r"[/\\](?:webdataset|datasets|pyarrow|PIL|decord|soundfile|librosa|torchaudio|imageio)"
    r"[/\\]|[/\\]torchvision[/\\](?:datasets|io)[/\\]"
    r"|[/\\]\w*(?:dataset|data_?loader|collate)\w*\.py$"
    r"|(?<![/\\]keras[/\\]utils)[/\\](?:\w*_)?data_?utils\.py$",
    re.IGNORECASE,
)
# A reader module reads samples (`input_reader.py`, `jsonl_reader.py`, paddlerec's `reader.py`)
# unless a word of its name says it reads something else: a config, a checkpoint, weights, a
# model, events (TensorFlow's `py_checkpoint_reader.py`, TensorBoard's `event_file_reader.py`);
# nor the standard library's importlib readers.
_READER = re.compile(r"[/\\](\w*reader\w*)\.py$", re.IGNORECASE)
_NOT_SAMPLES = frozenset(
    {
        *("config", "cfg", "conf", "yaml", "args", "checkpoint", "ckpt", "weight", "weights"),
        *("param", "params", "model", "state", "safetensors", "gguf", "event", "events"),
    }
)


def _sample_file(path: str) -> bool:
    """Whether a frame's file is the run's (or a library's) code that reads samples."""
    if _DATA_FILE.search(path):
        return True
    m = _READER.search(path)
    if m is None or re.search(r"[/\\]importlib[/\\]", path):
        return False
    return not set(m.group(1).lower().split("_")) & _NOT_SAMPLES


def data_frame(path: str) -> bool:
    """Whether a frame's file reads or decodes samples (not torch's own DataLoader machinery,
    whose errors are a worker's death: their rules say so)."""
    return _sample_file(path) and not re.search(r"[/\\]torch[/\\]utils[/\\]", path)


# Errors about a value (not about the code's own names and types) raised while a batch was
# being fetched: a frame of the chain reads or prepares samples (a dataset's `__getitem__`, a
# DataLoader's fetch, and so a collate function it calls), and every frame below it is part of
# that fetch.
SAMPLE_ERRORS = frozenset(
    {
        *("KeyError", "IndexError", "ValueError", "ZeroDivisionError", "EOFError"),
        *("AssertionError", "RuntimeError", "FileNotFoundError", "StopIteration"),
    }
)
_FETCH_FUNC = re.compile(r"^(?:__getitems?__|_next_data)$")
_FETCH_FILE = re.compile(r"[/\\]torch[/\\]utils[/\\]data[/\\]_utils[/\\]fetch\.py$")


def fetching(frame: Frame) -> bool:
    """Whether a frame reads or prepares samples: the DataLoader's fetch of a batch, or the
    run's own dataset code (a dataset's `__getitem__`, a dataset module); not a library's
    mapping (`os.environ[...]`, a config registry), nor a collate function of the run's own
    called outside a DataLoader (its KeyError is as often the code's as the data's)."""
    path, func, _ = frame
    if _FETCH_FILE.search(path) or (func == "_process_next_batch" and not own_file(path)):
        return True  # (the second: torch < 1.0 re-raising a worker's error in the main process)
    if not own_file(path) or path.startswith("<frozen "):  # the standard library's, frozen
        return False
    return bool(func and _FETCH_FUNC.match(func)) or _sample_file(path)


def fetched(chain: list[Frame]) -> bool:
    """Whether a traceback's chain (outermost first) passes through a frame that reads or
    prepares samples, outside any object's construction: a lookup while a dataset or a sampler
    is being built (`__init__` above it) is the set-up's, as a key the code expects and the
    data does not hold; nor while a module is imported (its `<module>` frame under an import
    line), which runs the module's set-up, not a fetch; nor a DataLoader or a sampler being
    built below the dataset code (`DataLoader(..., sampler=...)` in a `load_dataset()`): the
    loader's set-up refused its arguments, no sample was read."""
    for i, frame in enumerate(chain):
        if frame[1] == "__init__" or _imported(chain, i):
            return False
        if fetching(frame):
            return not any(_LOADER_BUILT.search(p) and f == "__init__" for p, f, _ in chain[i:])
    return False


# torch's DataLoader and samplers (DistributedSampler's in distributed.py), whose `__init__`
# checks the loader's arguments.
_LOADER_BUILT = re.compile(
    r"[/\\]torch[/\\]utils[/\\]data[/\\](?:dataloader|sampler|distributed)\.py$"
)


# A frame's code line that imports (`from .builder import DATASETS`, `import mmdet.apis`).
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+\S+\s+)?import\b")


def _imported(chain: list[Frame], i: int) -> bool:
    """Whether frame `i` of a chain runs a module's own code as an import line above it asked:
    not the script's own `<module>` frame, nor one a debugger, a profiler or runpy ran."""
    return chain[i][1] == "<module>" and i > 0 and bool(_IMPORT_LINE.match(chain[i - 1][2]))


def importing(chain: list[Frame]) -> bool:
    """Whether a chain (outermost first) passes through a module being imported: the error was
    raised by a module's set-up (its own code, or a function it called as it was imported)."""
    return any(_imported(chain, i) for i in range(len(chain)))


# A frame in the standard library or an installed package, by its path.
_LIBRARY_PATHS = ("site-packages", "dist-packages", "/lib/python", "\\lib\\")


def own_file(path: str) -> bool:
    return not any(lib in path for lib in _LIBRARY_PATHS)


_SPAWN_FILE = re.compile(r"[/\\]multiprocessing[/\\]spawn\.py$")


def spawn_start(
    path: str, func: str | None, exc_type: str | None, body: str, lines: list[tuple[int, str]]
) -> bool:
    """Whether a traceback (its innermost frame's `path` and `func`, its `lines`) is a spawned
    process finding its parent's pipe closed: its innermost frame reads the start-up data and
    the data ended (not an error of the data itself, such as a class the child cannot import:
    that one is the code's). The frame is spawn's `_main`, or the statement it raised in is
    spawn's read of the data: the parent's and the child's tracebacks interleaved line by line
    on one console (Windows) leave the frame above it another's."""
    if exc_type != "EOFError" and "pickle data was truncated" not in body:
        return False
    if func == "_main" and _SPAWN_FILE.search(path):
        return True
    where = frames(lines)
    return bool(where) and where[-1][2].endswith("reduction.pickle.load(from_parent)")


_CONNECTION_FILE = re.compile(r"[/\\]multiprocessing[/\\]connection\.py$")
_RECEIVE = frozenset({"recv", "recv_bytes", "_recv_bytes", "_recv"})


def pipe_closed(path: str, func: str | None, exc_type: str | None) -> bool:
    """Whether a traceback (its innermost frame's `path` and `func`) is a process finding its pipe
    to another process closed as it waited for a message (`EOFError` raised by multiprocessing's
    Connection.recv): the process at the other end (a vectorised environment's worker, a pool's
    worker, the parent) had died."""
    return exc_type == "EOFError" and func in _RECEIVE and bool(_CONNECTION_FILE.search(path))
