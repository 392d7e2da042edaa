"""The literals triage looks for before any rule runs (triage/scan.py, blocks.py): every line
holding one is handed to the rules, the others are only counted. Lowercase bytes, found with
bytes.find (or grep, triage/grepfind.py) in the lowercased text.

- NEEDLES: searched everywhere, in every file;
- RARE_NEEDLES: messages rare in big logs (the kernel's, the scheduler's, Kubernetes'), searched
  in small files and at a big file's edges;

What a big log's middle is searched for besides NEEDLES is triage/middle.py's.

Every shipped rule's pattern must contain one of NEEDLES or RARE_NEEDLES: the unit tests check
each rule's quoted corpus line and example lines against them (a line that matches a rule but
holds no needle never reaches it). No needle may be empty or hold a line break: grep -F reads
each line of its patterns as one, and an empty one finds every line (a test checks that too).
"""

from __future__ import annotations

# Lowercase needles; one bytes.find pass each over every chunk. Every shipped rule's pattern
# must contain one of these (a unit test checks the corpus and the rules against them).
NEEDLES: tuple[bytes, ...] = (
    b"error",
    b"exception",
    b"traceback",
    b"nccl warn",
    b"killed",
    b"timeout",
    b"timed out",
    b"sig",
    b"segmentation",
    b"fail",
    b"overflow",  # fp16 scalers: `Gradient overflow. ... reducing loss scale to 0.5`
    b"illegal instruction",
    b"subset of ranks",  # Horovod's stall inspector: a hang's own evidence, in a log of any size
    b"watchdog got stuck",  # c10d's heartbeat monitor: the same
)
# Other accelerators' and the node's own words for a device or a link that failed (dmesg, ROCm's
# runtime): rare in any log, and a restart's reason when they come mid-run, so searched in a big
# log's middle too.
DEVICE_DOWN: tuple[bytes, ...] = (
    b"amdgpu",
    b"hw exception",
    b"vram is lost",
    b"habanalabs",
    b"slice_failure",
    b"pcie bus error",
    b"uncorrected (fatal)",
    b"link down",
    b"engine reset: engine_class",  # Intel's xe driver resetting a hung engine
    b"protection_fault_status",  # amdgpu's dump of a GPU page fault's status register, alone
    # the same fault's own line and the next, without the driver's prefix (`[gfxhub] page fault`,
    # `Faulty UTCL2 client ID: TCP (0x8)`)
    b"hub] page fault",
    b"faulty utcl2 client",
)
# Needles of messages that are rare in big logs: from the kernel, the scheduler or Kubernetes
# (their files are small), or that come with one of NEEDLES in any log big enough for speed to
# matter. Searched in files up to SMALL_FILE_BYTES and in any file whose first chunk looks like
# a kernel or Kubernetes log.
RARE_NEEDLES: tuple[bytes, ...] = (
    # a logger's fatal and critical levels, where the line names no error (`FATAL: dataset
    # directory /data/x is empty`): a logged error line's (triage/engine.py _ERROR_RECORD)
    b"fatal",
    b"critical",
    b"loss scale to",  # not `loss scale`: Megatron prints `loss scale: 1.0` on every step
    b"mismatch",  # `size mismatch for ...` (the RuntimeError above it holds `error`)
    b"gpu is lost",
    b"tensor(nan",  # a scalar (a loss) printed at NaN
    b"loss exploded",  # a script's own divergence check (`Loss exploded to 378655.87 at step 6746`)
    b"loss diverged",
    b"produced nan",  # Julia's OrdinaryDiffEq: `First function call produced NaNs. Exiting.`
    b"backtrace (tid:",  # UCX's crash handler, its `Caught signal` line cut from the log
    b"offset mean is",  # EDVR's deformable convolution going unstable (BasicSR: `offset abs mean`)
    b"offset abs mean is",
    b"out of gpu memory",  # Julia's CUDA.jl: `Out of GPU memory trying to allocate 21.000 MiB`
    b"only supports nhwc",  # TensorFlow's CPU kernels given a channels-first model
    b"only supports the nhwc",
    b"watchdog caught collective",  # c10d's timeout, its line cut before `timeout`
    b"does not have storage.",  # Google's IAM refusing a bucket to the job's service account
    b"unrecognized option",  # Slurm's commands refusing an option
    b"unrecognized argument",  # MPICH's and Intel MPI's mpiexec (Hydra) refusing one
    b"executable file not found",  # a container runtime without the image's command
    b"pmi support",  # Open MPI started by srun without Slurm's PMI
    b"ignoring corrupt",  # a loader dropping samples it cannot read (Ultralytics)
    b"skipping corrupt",
    b"[extra info] when calling:",  # Lhotse's note of the cut it failed to load
    b"total-vm:",  # the kernel's report of a process the OOM killer killed
    b"oom_score_adj name",  # the kernel's table of processes before an OOM kill
    b"huge value in q",  # MuJoCo's unstable simulation
    b"total hbm usage >=",  # XLA's report of a TPU program's memory, under its OOM
    b"compile with use_",  # MXNet built without a feature: `compile with USE_DIST_KVSTORE=1 to use`
    b"coredump_hook",  # Google's crash handler in libtpu's processes (`RAW: Dumping core locally.`)
    b"unexpected pjrt_api size",  # PJRT's plugin loader and a libtpu built for another C API
    b"client mesh master",  # torch_xla's XRT mesh client, waiting for its master
    b"but source was compiled with",  # TensorFlow's cuDNN that does not fit its build
    b"dnn library is not found",  # TensorFlow without a cuDNN it can load
    b"no matches for kind",  # Kubernetes' API: an operator (CRD) not installed
    b"could not find the requested resource",  # the same, through an operator's client
    b"is invalid: ",  # Kubernetes' API: a manifest that fails validation
    b"is forbidden: ",  # Kubernetes' API: a quota or a policy
    b"denied the request",  # Kubernetes' admission webhooks
    b"core dumped",  # the shell's words for a child that aborted: `Aborted (core dumped)`
    b"nccl info",  # NCCL's trace of a failed call has no other word: `misc/socket.cc:568 -> 2`
    b"explicit valence",  # RDKit's word on a molecule it rejects, logged as a warning
    b"kekulize",
    b"with status -",  # a pool's child killed by a signal: `exited unexpectedly with status -11`
    b"========= invalid",  # compute-sanitizer's report of a kernel's bad access
    b"========= misaligned",
    b"========= out-of-range",
    b"no valid path found",  # CTC's loss on a label its input cannot hold (TensorFlow's warning)
    # gzip's and lzma's EOFError on a truncated file, its message wrapped onto a line of its own
    b"compressed file ended before",
    b"name or service not known",  # getaddrinfo's word, as ssh prints it: `Could not resolve ...`
    b"retry count exceeded",  # UCX's InfiniBand transport giving up on a peer (under MPI)
    b"wrong annotation: class_id",  # Darknet's check of a label file
    # Lua Torch's host allocator (`Torch: not enough memory: you tried to`), LuaJIT's own
    # (`luajit: .../threads.lua:183: [thread 4 callback] not enough memory`)
    b"not enough memory",
    b"] **********",  # TensorFlow's BFC allocator's map of its memory, printed when it fails
    b"help memory",  # MATLAB out of host memory: `Out of memory. Type HELP MEMORY for your ...`
    b"dynet is out of memory",  # DyNet's memory pool: `try increasing with --dynet-mem`
    b"is not invertible",  # TensorFlow's MatrixInverse: `Invalid argument: Input is not ...`
    b"mpi_err_count",  # Open MPI's error class: `*** MPI_ERR_COUNT: invalid count argument`
    b"couldn't open file: ",  # Darknet's file_error(): a path it could not open, then exit
    b"etcd.etcd",  # torch elastic's etcd rendezvous: `etcd.EtcdKeyNotFound: Key not found`
    b"memory usage. pausing worker",  # a Dask worker at its pause threshold
    b"not available in this library",  # libtpu's loader, on a function its build lacks
    b"' not found (required by",  # the dynamic linker: a binary needs a newer glibc or libstdc++
    b"autotuner.cc:",  # XLA's GPU autotuner (its fatal check has no other word)
    b"getblasgemmalgorithms",  # its cuBLAS GEMM picker's failed check
    b"error locating target",  # Hydra unable to import a config's _target_
    # Hydra's and OmegaConf's refusal of an override, printed without the exception's class
    b"could not override",
    b"is not in struct",
    b": block: [",  # a CUDA kernel's assert, its line cut before `Assertion`
    b"a program or fatal error occurred",  # Google's TPU runtime on a chip it gave up on
    b"out of resource: shared memory",  # Triton's kernel too big for this GPU
    b"too old to be supported",  # Triton's check of the GPU (`GPUTooOldForTriton: Found ...`)
    b"unsupported gpu architecture",  # nvcc older than the GPU: `nvcc fatal : Unsupported gpu`
    b"working triton installation",
    # a port taken, its errno's name or words on a line of their own (c10d's message, its
    # fields one a line: `name: EADDRINUSE`, `message: address already in use`)
    b"eaddrinuse",
    b"address already in use",
    b"cannot find -l",  # the linker: `/usr/bin/ld: cannot find -lcuda: No such file or directory`
    # Caffe's words, in its glog lines without `error`: an image in its LMDB it cannot decode,
    # a snapshot prefix it cannot write to
    b"could not decode datum",
    b"cannot write to snapshot prefix",
    b"can't open file '",  # CPython given a script that is not there: `... [Errno 2] ...`
    b"input ran out of data",  # Keras' fit stopping early: its warning holds no other needle
    b": permission denied",  # a shell's script not executable; ssh refusing a password
    b"make: ***",  # make giving up on a run-time build: `make: *** No targets ...  Stop.`
    b"some tensors share memory",  # safetensors' refusal, on its own line in a message
    b"reserved by pytorch but unallocated",  # torch's CUDA OOM message, its start wrapped away
    b"requested by op",  # TensorFlow's BFC allocator failing, its start wrapped away
    b"instantiate abstract class",  # TypeError's words, printed without the class
    b"parse serialized",  # TensorFlow's parser on TFRecords: `Can't parse serialized Example.`
    b"of memory while trying to allocate",  # XLA's OOM, the line wrapped after its `Out`
    # Open MPI's TCP transport between the nodes: its help text's first line, and a connection
    # that reached the wrong process
    b"unable to complete a tcp connection",
    b"received unexpected process identifier",
    # the CUDA driver on PTX newer than itself, its message on a line of its own (llm.c's check:
    # `[CUDA ERROR] at file train_gpt2.cu:341:`, then the message)
    b"unsupported toolchain",
    # Words of the rules' own patterns that a line can hold without any other needle: a wrapped
    # message's second line, a message printed without its exception class (found by matching
    # every rule against every line of the corpus that holds no needle)
    b"tried to allocate",  # torch's OOM message, its `CUDA out of memory.` on the line before
    b"total capacity of",
    b"before timing out",  # c10d's watchdog line, wrapped
    b"taking the entire process down",
    b"must match the size of tensor",  # a shape mismatch printed without its RuntimeError
    b"shapes cannot be multiplied",  # the same (`mat1 and mat2 shapes cannot be multiplied`)
    b"split_sizes to sum exactly",  # the same (a debugger's paste puts RuntimeError above it)
    b"does not require grad and",  # autograd's, under a debugger's `Exception has occurred:`
    b"must have the same size and shape",  # TensorFlow's Select on two shapes, its op name first
    b"negative dimension size",  # TensorFlow's conv larger than its input, pasted alone
    b"channels, but got",  # torch's conv given another channel count, pasted without its class
    b"cannot obtain address of",  # XGBoost's rabit resolving its tracker
    b"must have the same dtype",
    b"key(s) in state_dict",  # `Missing key(s) in state_dict:`, `Unexpected key(s) ...`
    b"stack expects each tensor",
    b"cannot batch tensors with different shapes",  # tf.data's batch, pasted alone
    b"is not in [0, ",  # TensorFlow's gather: `indices[3,7] = 5000 is not in [0, 5000)`
    b"label value of",  # TensorFlow's sparse labels: `Received a label value of 66908 which ...`
    b"is out of bounds",  # `Target -1 is out of bounds.`
    b"upload gs://",  # TensorFlow's GCS writer: `when resuming upload gs://...`
    b"uploading gs://",
    b"upload s3://",
    b"uploading s3://",
    b"statuscode.unavailable",  # gRPC's status, a field on a line of its own
    b"non-zero exit status",
    b"badzipfile",
    b"closed by peer",
    b"closed by remote peer",
    b"already at minimum",  # `Current loss scale already at minimum - cannot decrease scale`
    b"distributed package doesn't have",
    b"cannot identify image file",
    b"largestfreeblock:",  # TensorFlow's BFC allocator's statistics after an out-of-memory
    b"gpuassert",  # a CUDA extension's own check macro: `GPUassert: out of memory ...`
    b"for existing parameter",  # Marian's shape check
    b"[nan]",  # a tensor printed at NaN by TensorFlow's tf.Print: `Total loss is :[nan]`
    b"nvshmem",  # NVSHMEM's transport (under DeepEP) failing: its lines name only its own source
    b"deepep timeout check failed",  # DeepEP's kernels' own timeout
    b"dst tensor is not initialized",  # TensorFlow 1.x out of GPU memory
    b"session crashed after using all available ram",  # Colab's host out of memory
    b"ggml_assert",  # ggml's own assertions (llama.cpp)
    b"valid samples",  # a preprocessing step that kept no sample
    b"dataset is empty after",
    b"across ranks is zero",  # Lightning's warning of an empty DataLoader
    b"found 0 ",  # a loader's count at zero: Keras' `Found 0 images belonging to 0 classes.`
    b"loaded 0 ",
    b"0 training images",  # (lettered in a big log's middle: `training images`, not `training `)
    b"0 training samples",
    b"0 training examples",
    b"': could not find '",  # Hydra's short error for a config it cannot compose
    b"': could not load '",
    b"cannot find primary config",
    b"would exceed allowed memory",  # torch's allocator over its memory fraction
    b"tcmalloc: large alloc",  # tcmalloc's report of a huge host allocation (host.large_alloc)
    b"memory on the node (ip:",  # Ray's memory monitor's message, cut before its `threshold`
    b"still waiting for response from",  # TensorFlow's master on a task that never answered
    b"memory object allocation failure",  # OpenCL's device out of memory
    b"bufferassignment oom",  # XLA's
    b"enough gpu memory",  # a trainer's own words (faceswap)
    b"exc_bad_access",  # lldb's stop on a native crash (macOS)
    b"tcl_asyncdelete",  # Tcl's panic: a Tk object freed on another thread
    b"could not initialize egl",  # headless rendering (code.headless_render)
    b"glfw library is not initialized",
    b"response executing graphql",  # wandb's GraphQL client on a server's 5xx
    # Windows' exit statuses of a native crash, each as hex, unsigned and signed, and the name
    # Windows gives it: an access violation (0xC0000005), a stack overflow (0xC00000FD; its name
    # holds `overflow`, a needle above), a fail-fast abort (0xC0000409), an integer division by
    # zero (0xC0000094), an illegal instruction (0xC000001D)
    b"0xc0000005",
    b"3221225477",
    b"-1073741819",
    b"status_access_violation",
    b"0xc00000fd",
    b"3221225725",
    b"-1073741571",
    b"0xc0000409",
    b"3221226505",
    b"-1073740791",
    b"status_stack_buffer_overrun",
    b"0xc0000094",
    b"3221225620",
    b"-1073741676",
    b"status_integer_divide_by_zero",
    b"0xc000001d",
    b"3221225501",
    b"-1073741795",
    b"status_illegal_instruction",
    *DEVICE_DOWN,
    b"(nan)",  # a metric logger's running average gone non-finite: `loss: 6.72 (inf)`
    b"(inf)",
    b"out-of-memory",  # Google AI Platform: `The replica master 0 ran out-of-memory and exited`
    b"aborted",  # a shell's words for a child that aborted (`Aborted`, `zsh: abort ...`)
    b"zsh: abort",
    b"ninja: build stopped",
    b"storage has wrong size",
    b"out of shared memory",  # torch's hint for DataLoader workers short of /dev/shm
    b"usage: ",  # argparse's usage block, printed when it rejects a command line
    b"environment variable",  # a library refusing one (`invalid value for environment variable`)
    b"memory use is high",  # Dask's workers on their memory limit
    b"memory budget",
    b"memory_limit set to",
    b"warn",
    b'file "',
    b"kill",
    # Not `nan`: Megatron prints `number of nan iterations: 0` on every step.
    b": nan",
    b"= nan",
    b" nan,",
    b"nan loss",
    b"  nan",  # a NaN padded into a column (OpenNMT's `ppl:   nan; xent:  nan`)
    b" nan nan",  # a row of losses at NaN (fastai's table: `0 nan nan 0.997788 00:34`)
    # a loss at infinity (`total_loss: inf`, `Loss is Infinity`); not `: inf`, which is in
    # every line of loggers that print `: INFO`
    b"loss: inf",
    b"loss=inf",
    b"loss = inf",
    b"loss is inf",
    b"non-finite",
    b"loss nan",
    b"is nan",
    b"are nan",
    b"nan or inf",
    b"nan values",
    b"found nan",
    b"nan detected",
    b"nans detected",
    b"detected nan",
    b"encountered nan",
    b"'nan'",
    b"nan in ",
    b"nan at ",  # a trainer's own check naming the step: `NaN at step 1558`
    b"preempt",
    b"cancel",
    b"abort",
    b"xid",
    b"evict",
    b"not responding",
    b"blocked for more",
    b"oom",
    b"nvrm",
    b"fallen off",
    b"low on resource",
    b"stale file",
    b"no space left",
    b"quota",
    b"memoryerror",
    b"native memory allocation",  # a JVM's fatal error report (a Java sidecar's host)
    b"bad_alloc",
    b"shutting down",
    b"time limit",
    b"interrupt",
    b"systemexit",
    b"ecc",
    b"compatible",
    b"socket",
    b"(idle)",
    b"(active)",
    b"stall",
    b"corrupt",
    b"double free",  # glibc's heap checks (`free(): double free detected in tcache 2`)
    b"tcache chunk",
    b"fastbin chunk",
    b"truncated",
    b"invalid",
    b"imminent",
    b"terminat",
    b"death signal",
    b"assert",
    b"refused",
    b"unreachable",
    # other runtimes' words for a network that failed (ssh's, Go's, Java's, Node's, curl's)
    b"no route to host",
    b"no such host",
    b"unknownhostexception",
    b"enotfound",
    b"eai_again",
    b"etimedout",
    b"i/o timeout",
    b"could not resolve host",
    b"reset by peer",
    b"broken pipe",
    b"to all addresses",
    b"not a gzipped file",  # gzip.BadGzipFile's words, with no `error` on its line
    b"soft lockup",  # the kernel's watchdog: `watchdog: BUG: soft lockup - CPU#98 stuck for 22s!`
    b"_dynamo.exc.",  # torch.compile's refusals (`torch._dynamo.exc.Unsupported: ...`)
    b"detected stall",  # RCU's: `rcu_sched self-detected stall on CPU`
    b"lustre",  # the Lustre client's own lines (`Lustre: ...: Connection to ... was lost`)
    b"pressure]",  # a pod evicted for its node's condition: `had condition: [DiskPressure]`
    b"non-zero status of",  # Vertex AI's replica: `exited with a non-zero status of 137`
    b"hard lockup",  # the kernel's watchdog: `Watchdog detected hard LOCKUP on cpu 12`
    b"rate limit for object",  # GCS's throttling of writes to one object
    b"slowdown",  # S3's
    b"winerror",
    b"exhausted",
    b"eof",
    b"check failed",
    b"too many resources",
    b"memory limit",
    b"not ending with signals",
    b"deadline",
    b"imagepull",
    b"errimage",
    b"configerror",
    b"launch timed out",
    b"initialization error",
    # The shell's signal messages in other locales (glibc): zh, ru, de, fr, es, ja, pl, pt.
    "段错误".encode(),
    "已杀死".encode(),
    "总线错误".encode(),
    "шибка".encode(),  # bytes.lower() leaves non-ASCII letters alone: no capital first letter
    "бито".encode(),
    b"speicherzugriffsfehler",
    "getötet".encode(),
    b"erreur de segmentation",
    "rocessus arrêté".encode(),
    "iolación de segmento".encode(),
    "セグメンテーション違反".encode(),
    "naruszenie ochrony pamięci".encode(),
    # and SIGILL's (segfault.sigill): de, fr, es, pt, ru, zh, ja, pl
    b"maschinenbefehl",
    "instruction illégale".encode(),
    "instrucción ilegal".encode(),
    "instrução ilegal".encode(),
    "едопустимая инструкция".encode(),
    "非法指令".encode(),
    "不正な命令".encode(),
    "błędna instrukcja".encode(),
    b"return code",
    b"exit code",
    b"exitcode",
    b"remote daemon",  # mpirun: `ORTE has lost communication with a remote daemon.`
    b"daemons",  # `ORTE was unable to reliably start one or more daemons.`
    b"abruptly died",  # datasets' map() worker killed (OOM)
    b"ran out of memory",  # TPU/XLA HBM, TensorFlow's allocator
    b"failcnt",  # the cgroup's memory report in dmesg
    b"lame workers",  # TPU workers gone (preempted)
    b"ready ranks",  # Horovod's stalled-ops report
    b":nan",  # `loss:nan` (no space)
    b"=nan",
    b"memory pressure",  # Ray: `Workers (tasks / actors) killed due to memory pressure (OOM)`
    b"nvjpeg",
    b"marked dead",  # Ray: a node lost (`... has been marked dead because the detector ...`)
    b"node has died",
    b"training is done",  # the run's own word that it finished (a time limit after it: a hang)
    b"training done",
    b"training complete",
    b"training finished",
    b"finished training",
    b"done training",
    b"permission denied (publickey",  # ssh refusing a multi-node launcher
    b"disconnect",  # http.client's `RemoteDisconnected: Remote end closed connection ...`
    b"ephemeral",  # the kubelet's eviction for the pod's own local storage (`kubectl describe`)
    b"emptydir",
    b"store based barrier",  # torch's `Waiting in store based barrier to initialize process group`
    b"store-based barrier",  # ... and its `Completed store-based barrier for key ...`
    b"power key pressed",  # GCE's ACPI shutdown of a preempted or stopped VM (systemd-logind)
    b"moov atom",  # ffmpeg's `moov atom not found`: an mp4 cut short
    b"numpy 1.x",  # NumPy 2's warning for a module built against 1.x
    b"binary incompatib",  # `numpy.dtype size changed, may indicate binary incompatibility`
    b"_array_api not found",
    b"premature end",  # libjpeg's `Premature end of JPEG file` (a warning, or TensorFlow's error)
    b"gdb) ",  # a debugger attached to a stuck process (`(gdb) bt`, `(cuda-gdb) bt`, rocgdb's)
    b"attaching to process",
    b"(lwp ",
    b"^c",  # the terminal's Ctrl-C
    b"creation task",  # Ray: `The actor died because of an error raised in its creation task`
    b"system_error",  # Ray: `Worker exit type: SYSTEM_ERROR`
    b"has crashed",  # Ray: `Owner's node has crashed`
    b"died unexpectedly",
    b"no such command",  # click's usage errors (`Error: No such command 'run'.`)
    b"no such option",
    b"missing argument",
    b"invalid value for",
    b"cannot be opened",  # torch.save's writer: `File ckpt/x.pt cannot be opened.`
    b"': inf",  # `{'loss': inf, 'grad_norm': inf}`
    b'": inf',  # JSON's `{"loss": Infinity}`
    b'": "nan',
    b"norm: inf",
    b"norm=inf",
    b"library version mismatch",  # NVML: `Driver/library version mismatch`
    b"running low on memory",  # Ray's memory monitor
    b"mem(gb)",  # its table of the node's top memory users
    b"failed with oom",  # torch's allocator: `expandable_segments: memory mapping failed with OOM`
    b"weights_only",  # torch.load's refusal: `... types accepted by default with weights_only`
    b"weights only load failed",
    b"grad_scale is too small",  # icefall's recipes
    b"format not recognised",  # libsndfile
    b"unknown format",
    b"times out",  # Ascend's HCCL: `Getting socket times out`, `... register times out`
    b"did not send the data",
    b"found invalid values",  # torch.distributions on NaN logits
    b"unable to allocate",  # numpy's `_ArrayMemoryError: Unable to allocate 6.20 MiB ...`
    b"not enough disk space",  # HF datasets
    b"terminated abruptly",  # concurrent.futures: a pool's worker killed without a word
    b"panicked at",  # a Rust library's panic: `thread '<unnamed>' panicked at 'index out of ...'`
    b"): argument '",  # torch's argument parser: `dropout(): argument 'input' ... must be Tensor`
    b" has no attribute '",  # AttributeError's words, printed without the class
    b"are too open",  # ssh refusing a private key others can read: `Permissions 0640 for ...`
    b"--no-load-",  # Megatron's resume without optimizer or RNG state: `Specify --no-load-optim`
    b"coordinationservice/registertask",  # JAX's multi-host start-up: a task never registered
    b"had an illegal value",  # a BLAS: `On entry to GEMM_EX parameter number 12 had an ...`
    b"attempt to run as root",  # Open MPI: `mpirun has detected an attempt to run as root.`
    b"unable to launch the specified application",  # Open MPI: the program could not be run
    b"not found in checkpoint",  # TensorFlow's restore: a variable the checkpoint lacks
    b"no configurable matching",  # gin-config's, the message alone under its file and line
    b"moving average ignored a value",  # YOLACT's warning of a loss gone NaN (no error's word)
    b"not enough slots",  # Open MPI: more processes asked for than the hosts have slots
    b"already filled",  # Open MPI: `All nodes which are allocated for this job are already filled.`
    b"failed to connect to all addresses",  # gRPC
    b"allocation failed",  # Habana's `MODULE:PT_DEVMEM Allocation failed for size`
    b"out of memory",  # an OOM line without its exception class (`CUDA out of memory. Tried ...`)
    b"reduce memory use",  # XLA's rematerialization that could not fit the device's memory
    b"memory access fault",  # ROCm: `Memory access fault by GPU node-1 ...`
    b"duplicate gpu",  # NCCL: `Duplicate GPU detected : rank 0 and rank 1 both on CUDA device`
    b"tooskewed",  # AWS: `RequestTimeTooSkewed`
    b"] nan",  # `[Loss] nan`
    b"ops kernel",  # Ascend CANN: `EZ3003: No supported Ops kernel and engine are found for`
    b"cannot find bin",  # `EZ9999: ... Cannot find bin of op FlashAttentionScore`
    b"command not found",  # bash in the job's script
    b"mixed torch.tensor and dtensor",  # an operator given a plain tensor beside DTensors
    b"no operator found for",  # xFormers' dispatcher: `No operator found for `memory_efficient_...`
    b"wasn't build with cuda",  # and its reason for each kernel: `xFormers wasn't build with CUDA`
    b"no data found",  # kohya's sd-scripts: `No data found. Please verify arguments`
    b"could not find any nvidia",  # Apptainer/Singularity's --nv on a host without the libraries
    b"munge encode failed",
    b"control machine address",
    b"pending placement group",  # Ray waiting for resources no node has free
    b"cannot be scheduled right now",
    b"could not find a node type",
    b"completely launched",  # srun: `StepId=1.0 aborted before step completely launched`
    b"required library version not found",  # bitsandbytes' CUDA set-up
    b"device memory not enough",  # Kunlun's XPU runtime
    b"pbs: job killed",  # PBS's resource limits: walltime, mem, ncpus
    b"become negative",  # TRL's PPO: `KL divergence is starting to become negative`
    b": not found",  # dash (/bin/sh), a launcher's shell: `/bin/sh: 1: torchrun: not found`
    b"unbound variable",  # bash under `set -u`: `slurm_script: line 9: NNODES: unbound variable`
    b"parameter not set",  # dash's `sh: 1: NNODES: parameter not set`; bash's `${GPUS:?}`
    b"parameter null",
    b"arithmetic expression",  # dash: `s1.sh: 2: arithmetic expression: division by zero: ...`
    b"value too great",  # bash: `1e: value too great for base (error token is "1e")`
    b"fabric is not available",  # Intel MPI: `MPI startup(): ofi fabric is not available and ...`
    b"open hfi unit",  # Omni-Path's PSM2: `PSM2 can't open hfi unit: -1 (err=23)`
    b"open nic unit",  # PSM3: `PSM3 can't open nic unit: 3 (err=23)`
    b"hfi units are active",  # `PSM2 no hfi units are active (err=23)`
    b"[errno 2] no such file",  # a FileNotFoundError's message printed alone (`print(e)`)
    b"[errno 13] permission denied",
    b"err!",  # nvidia-smi's table, a sensor it could not read: `|ERR!   51C    P2    ERR! / 250W |`
    b"prolog failure",  # Slurm: `salloc: Prolog failure on node k003-006`
    b"unknown image file format",  # TensorFlow's decode_image on a file that is no image
    b"cd: ",
    "错误：".encode(),  # argparse in a Chinese locale
    "失败：".encode(),  # wget in a Chinese locale: `... 失败：连接超时。`
    # the CUDA runtime's own words for a kernel's fault, printed without `error` by extensions
    # (`Line 298: an illegal memory access was encountered`)
    b"illegal memory access",
    b"illegal address",
    b"segfault",  # `!!!!!!! Segfault encountered !!!!!!!` (a signal handler's own words)
    b"ray::",  # Ray's header of a task's traceback (`ray::TaskRunner.run() (pid=7, ...)`)
    b"misaligned address",
    # a client that could not reach its server (`Could not connect to server`, `Cannot connect
    # to host`, `Unable to connect to the remote endpoint`)
    b"t connect",
    b"unable to connect",
    b"establish connection",
    b"establish a connection",
    b"rate limited",  # huggingface_hub: `Rate limited. Waiting 207.0s before retry`
    b"not finite",  # SpeechBrain's `Parameter is not finite`
    # Open MPI's help text when no transport joins two of its processes
    b"unable to reach each other",
    b"processes be able to reach",  # (the help text wraps after `reach`)
    # a perplexity at infinity (OpenNMT-tf's `loss = 148890.718750 ; perplexity = inf`)
    b"perplexity = inf",
    b"perplexity: inf",
    b"perplexity=inf",
    b"ppl = inf",
    b"ppl: inf",
    b"ppl=inf",
    b"bad allocation",  # MSVC's words for a std::bad_alloc, alone on its line (CatBoost's)
    b"cudnn_status",  # cuDNN's status alone on its line (MatConvNet: `(CUDNN_STATUS_BAD_PARAM)]`)
    b"exceeds maximum array size",  # MATLAB's host memory limit for one array
    b"not enough time for target transition",  # TensorFlow's CTC loss, printed without `error`
    b"nan avg",  # darknet's loss line at NaN (`2267: nan, nan avg, 0.001000 rate`)
    # Lua's runtime errors, by the file and line they name (`luajit: ./onmt/modules/LSTM.lua:41:
    # attempt to perform arithmetic on local 'layers' (a nil value)`): one needle for every kind
    b".lua:",
    # multiprocessing's words under spawn for a script without a main guard, wrapped so that
    # the line that says it holds none of the common needles
    b"bootstrapping phase",
    # NumPy's refusal of a file that is no array, printed by a loader that names no error
    # (nnU-Net's background workers: `Exception in background worker 7:` then the message)
    b"pickled data when allow_pickle",
    # TensorFlow's cuDNN older than its build, logged without a level by old versions
    b"loaded runtime cudnn library",
)
