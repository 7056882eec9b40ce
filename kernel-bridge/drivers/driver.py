# The Python kernel driver of cc-kernel-bridge. The host sends this file through the kernel's
# control pipe and runs it as module `_cc_kernel` (see kernel-bridge/src/kernel.rs).
#
# Protocol: JSON lines. On the host (mode "host") they travel on two extra fds; through an
# enclosure (mode "stdio") on the original stdin/stdout, each line prefixed with "\x1fcc:",
# while user stdout is moved to an internal pipe and relayed as "out" messages. A reader
# thread takes every incoming message, so interrupts and bridge replies arrive while a cell
# runs; the main thread runs cells.

import ast
import builtins
import itertools
import json
import linecache
import os
import signal
import sys
import threading
import traceback
import types
import _queue
import _thread

DRIVER_FILE = '<cc-kernel-driver>'

if sys.version_info < (3, 8):
    sys.stderr.write('the cc kernel needs Python 3.8 or newer, this is %s\n' % sys.version.split()[0])
    sys.exit(3)

MODE, NONCE = sys.argv[1], sys.argv[2]
if MODE == 'host':
    IN_FD, OUT_FD = int(sys.argv[3]), int(sys.argv[4])
    FRAME = b''
    if len(sys.argv) > 5:
        # The reaper: a fork (made before any thread exists) that waits for the host's end of
        # the lifeline to close, then kills this process group, so processes started by cells
        # do not outlive a host that died without cleaning up.
        _lifeline = int(sys.argv[5])
        if os.fork() == 0:
            try:
                _null = os.open(os.devnull, os.O_RDWR)
                for _fd in (0, 1, 2):
                    os.dup2(_null, _fd)
                os.closerange(3, _lifeline)
                os.closerange(_lifeline + 1, 4096)
                while True:
                    try:
                        if not os.read(_lifeline, 1):
                            break
                    except InterruptedError:
                        continue
            finally:
                os.killpg(0, signal.SIGKILL)
                os._exit(0)
        os.close(_lifeline)
else:
    # Through an enclosure: keep the protocol on the original stdin/stdout, give user code
    # /dev/null as stdin and an internal pipe as stdout, relayed below.
    IN_FD, OUT_FD = os.dup(0), os.dup(1)
    _null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(_null, 0)
    os.close(_null)
    _relay_r, _relay_w = os.pipe()
    os.dup2(_relay_w, 1)
    os.close(_relay_w)
    FRAME = b'\x1fcc:'
for _fd in (IN_FD, OUT_FD):
    os.set_inheritable(_fd, False)  # child processes of cells must not hold the protocol
sys.argv = ['']

_send_lock = threading.Lock()
TLA = getattr(ast, 'PyCF_ALLOW_TOP_LEVEL_AWAIT', 0x2000)
CO_COROUTINE = 0x80


def send(message):
    data = FRAME + json.dumps(message, separators=(',', ':')).encode() + b'\n'
    with _send_lock:
        view = memoryview(data)
        while view:
            try:
                written = os.write(OUT_FD, view)
            except InterruptedError:
                continue
            except OSError:
                os._exit(0)  # the host is gone
            view = view[written:]


def _clean(text):
    """Text safe for JSON consumers: lone surrogates become escapes."""
    if not isinstance(text, str):
        text = str(text)
    try:
        text.encode('utf-8')
        return text
    except UnicodeEncodeError:
        return text.encode('utf-8', 'backslashreplace').decode('utf-8')


if MODE != 'host':
    def _relay():
        while True:
            try:
                chunk = os.read(_relay_r, 65536)
            except InterruptedError:
                continue
            if not chunk:
                return
            send({'op': 'out', 'data': chunk.decode('latin-1')})

    threading.Thread(target=_relay, name='cc-stdout-relay', daemon=True).start()

for _stream in (sys.stdout, sys.stderr):
    try:
        # Line buffering lets output reach the host while a long cell runs (it is activity).
        _stream.reconfigure(encoding='utf-8', errors='backslashreplace', line_buffering=True)
    except Exception:
        pass

# ---------------------------------------------------------------------------------------
# The user's namespace and the builtins every cell sees.

_main = types.ModuleType('__main__')
_main.__builtins__ = builtins
sys.modules['__main__'] = _main
NS = _main.__dict__
MAIN_IDENT = threading.main_thread().ident


class ToolError(Exception):
    """A tool called with tool() failed: `kind` is machine-readable, `message` says why."""

    def __init__(self, kind, message, details=None):
        super().__init__('%s: %s' % (kind, message))
        self.kind = kind
        self.message = message
        self.details = details or {}


_pending = {}
_pending_lock = threading.Lock()
_call_ids = itertools.count(1)


def tool(name, args=None, /, **kwargs):
    """Calls a tool of this run (same approvals and checks as a model call); returns its
    JSON result as a dict, or raises ToolError."""
    if not isinstance(name, str):
        raise TypeError('tool() takes the tool name as a string, got %r' % (name,))
    payload = dict(args or {})
    payload.update(kwargs)
    call_id = next(_call_ids)
    done = _thread.allocate_lock()
    done.acquire()
    slot = [done, None]
    with _pending_lock:
        _pending[call_id] = slot
    try:
        try:
            send({'op': 'call', 'id': call_id, 'name': name, 'args': payload})
        except (TypeError, ValueError) as error:
            raise TypeError('tool() arguments must be JSON-serializable: %s' % error) from None
        done.acquire()
    finally:
        with _pending_lock:
            _pending.pop(call_id, None)
    reply = slot[1] or {}
    if reply.get('ok'):
        return reply.get('value')
    error = dict(reply.get('error') or {})
    kind = error.pop('kind', 'internal')
    message = error.pop('message', 'the tool call failed')
    raise ToolError(kind, message, error)


_cell = None            # the cell being run, for display() attribution
_shown = set()          # ids of figures displayed in this cell


def display(*objs):
    """Shows objects as rich output: HTML tables, PNG figures, or their text."""
    for obj in objs:
        items, plain = _bundle(obj)
        if not items or items[0]['mime'] != 'image/png':
            items.append({'mime': 'text/plain', 'data': _clean(plain)})
        send({'op': 'display', 'cell': _cell, 'items': items})


def _input(prompt=''):
    raise EOFError('input() is not available in an eval cell: stdin is closed; put the value '
                   'in the code instead')


builtins.tool = tool
builtins.ToolError = ToolError
builtins.display = display
builtins.input = _input

# ---------------------------------------------------------------------------------------
# Rich output.

_REPR_METHODS = (
    ('_repr_png_', 'image/png'),
    ('_repr_jpeg_', 'image/jpeg'),
    ('_repr_svg_', 'image/svg+xml'),
    ('_repr_html_', 'text/html'),
    ('_repr_markdown_', 'text/markdown'),
    ('_repr_latex_', 'text/latex'),
    ('_repr_json_', 'application/json'),
)


def _is_figure(obj):
    cls = type(obj)
    return (cls.__module__ or '').startswith('matplotlib') and cls.__name__ == 'Figure'


def _figure_png(fig):
    import base64
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', bbox_inches='tight')
    _shown.add(id(fig))
    return base64.b64encode(buffer.getvalue()).decode('ascii')


def _encode(mime, data):
    if isinstance(data, tuple):  # (data, metadata)
        data = data[0]
    if isinstance(data, (bytes, bytearray)):
        import base64
        return base64.b64encode(bytes(data)).decode('ascii')
    if mime == 'application/json' and not isinstance(data, str):
        return json.dumps(data, default=repr)
    return _clean(data)


def _bundle(obj):
    """The rich representations of obj (richest first) and its plain text."""
    if _is_figure(obj):
        return [{'mime': 'image/png', 'data': _figure_png(obj)}], _safe_repr(obj)
    items = []
    cls = type(obj)
    method = getattr(cls, '_repr_mimebundle_', None)
    if callable(method):
        try:
            bundle = method(obj)
            if isinstance(bundle, tuple):
                bundle = bundle[0]
            for mime, data in (bundle or {}).items():
                if mime != 'text/plain' and data is not None:
                    items.append({'mime': mime, 'data': _encode(mime, data)})
        except Exception:
            items = []
    if not items:
        for name, mime in _REPR_METHODS:
            method = getattr(cls, name, None)
            if not callable(method):
                continue
            try:
                data = method(obj)
            except Exception:
                continue
            if data is not None:
                items.append({'mime': mime, 'data': _encode(mime, data)})
    return items, _safe_repr(obj)


def _safe_repr(obj):
    try:
        text = repr(obj)
    except Exception as error:
        return '<repr of %s failed: %r>' % (type(obj).__name__, error)
    if len(text) > 80 and type(obj) in (dict, list, tuple, set):
        import pprint
        try:
            text = pprint.pformat(obj, width=100, sort_dicts=False)
        except Exception:
            pass
    return text


def _echo(value):
    """The text of the last expression; richer forms go out as display items."""
    items, plain = _bundle(value)
    if items:
        send({'op': 'display', 'cell': _cell, 'items': items})
    return _clean(plain)


def _show_open_figures():
    """Like Jupyter's inline backend: figures left open by a cell are shown, then closed."""
    pyplot = sys.modules.get('matplotlib.pyplot')
    if pyplot is None:
        return
    from matplotlib._pylab_helpers import Gcf
    managers = Gcf.get_all_fig_managers()
    for manager in managers:
        figure = manager.canvas.figure
        if id(figure) not in _shown:
            display(figure)
    if managers:
        pyplot.close('all')


def _mpl_show(*args, **kwargs):
    _show_open_figures()


class _MplBackendFinder:
    """Provides `module://_cc_mpl_backend`: Agg rendering, show() displays PNGs."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != '_cc_mpl_backend':
            return None
        from importlib.machinery import ModuleSpec
        return ModuleSpec(name, cls)

    @staticmethod
    def create_module(spec):
        return None

    @staticmethod
    def exec_module(module):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.backend_bases import FigureManagerBase
        module.FigureCanvas = FigureCanvasAgg
        module.FigureManager = FigureManagerBase
        module.show = _mpl_show


sys.meta_path.append(_MplBackendFinder)
os.environ['MPLBACKEND'] = 'module://_cc_mpl_backend'

# ---------------------------------------------------------------------------------------
# IPython idioms, rewritten to plain calls at the start of real code lines only.


class _LineScanner:
    """Tracks whether the next physical line starts a new statement (not inside a string,
    brackets or a backslash continuation)."""

    def __init__(self):
        self.depth = 0
        self.quote = None
        self.continued = False

    def at_statement_start(self):
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line):
        self.continued = False
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if self.quote is not None:
                if c == '\\':
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if c == '#':
                break
            if c in '"\'':
                triple = line[i:i + 3]
                self.quote = triple if triple in ('"""', "'''") else c
                i += len(self.quote)
                continue
            if c in '([{':
                self.depth += 1
            elif c in ')]}':
                self.depth = max(0, self.depth - 1)
            elif c == '\\' and line[i + 1:].strip() == '':
                self.continued = True
            i += 1
        if self.quote is not None and len(self.quote) == 1 and not line.rstrip('\r\n').endswith('\\'):
            self.quote = None  # an unterminated one-line string ends with its line


def _transform(code):
    lines = code.splitlines(True)
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith('#'):
            continue
        if line.startswith('%%'):
            name, _, args = stripped[2:].partition(' ')
            body = ''.join(lines[index + 1:])
            return "__import__('_cc_kernel').cell_magic(%r, %r, %r)\n" % (name, args.strip(), body)
        break
    scanner = _LineScanner()
    out = []
    for line in lines:
        if scanner.at_statement_start():
            body = line.lstrip(' \t')
            indent = line[:len(line) - len(body)]
            text = body.rstrip('\r\n')
            if text.startswith('!'):
                out.append("%s__import__('_cc_kernel').shell(%r)\n" % (indent, text[1:]))
                continue
            if text.startswith('%') and not text.startswith('%%'):
                name, _, args = text[1:].partition(' ')
                out.append("%s__import__('_cc_kernel').line_magic(%r, %r)\n" % (indent, name, args.strip()))
                continue
        scanner.feed(line)
        out.append(line)
    return ''.join(out)


class UsageError(Exception):
    """A magic was used wrongly."""


def _flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass


def shell(command):
    """`!cmd`: runs command in a shell; its output is the cell's output."""
    import subprocess
    _flush()
    executable = '/bin/bash' if os.path.exists('/bin/bash') else None
    completed = subprocess.run(command, shell=True, executable=executable, stdin=subprocess.DEVNULL)
    NS['_exit_code'] = completed.returncode


def line_magic(name, args):
    if name == 'pip':
        return _pip(args)
    if name == 'cd':
        target = os.path.expanduser(args.strip().strip('"\'') or '~')
        os.chdir(target)
        print(os.getcwd())
        return None
    if name == 'pwd':
        return os.getcwd()
    if name == 'timeit':
        return _timeit(args, '', None)
    raise UsageError('unknown magic %%%s; supported: %%pip, %%cd, %%pwd, %%timeit, !cmd, '
                     '%%%%bash, %%%%timeit' % name)


def cell_magic(name, args, body):
    if name == 'bash':
        import subprocess
        _flush()
        completed = subprocess.run(['bash', '-c', body], stdin=subprocess.DEVNULL)
        if completed.returncode != 0:
            raise subprocess.CalledProcessError(completed.returncode, 'bash')
        return None
    if name == 'timeit':
        return _timeit(args, body, True)
    raise UsageError('unknown cell magic %%%%%s; supported: %%%%bash, %%%%timeit' % name)


def _timeit(args, body, cell_mode):
    """`%timeit [-n N] [-r R] stmt` and `%%timeit [-n N] [-r R] [setup]` + body."""
    import shlex
    import timeit
    words = shlex.split(args, posix=False) if args else []
    number = repeat = None
    rest = []
    i = 0
    while i < len(words):
        if words[i] in ('-n', '-r') and i + 1 < len(words):
            value = int(words[i + 1])
            if words[i] == '-n':
                number = value
            else:
                repeat = value
            i += 2
            continue
        rest = words[i:]
        break
    tail = ' '.join(rest)
    setup, stmt = (tail, body) if cell_mode else ('pass', tail)
    if not stmt.strip():
        raise UsageError('timeit needs a statement to time')
    timer = timeit.Timer(stmt, setup or 'pass', globals=NS)
    if number is None:
        number, _ = timer.autorange()
    repeat = repeat or 7
    runs = [total / number for total in timer.repeat(repeat, number)]
    mean = sum(runs) / len(runs)
    std = (sum((run - mean) ** 2 for run in runs) / len(runs)) ** 0.5
    print('%s ± %s per loop (mean ± std. dev. of %d run%s, %s loop%s each)' % (
        _duration(mean), _duration(std), repeat, '' if repeat == 1 else 's',
        format(number, ','), '' if number == 1 else 's'))


def _duration(seconds):
    for unit, scale in (('s', 1.0), ('ms', 1e-3), ('µs', 1e-6), ('ns', 1e-9)):
        if seconds >= scale or unit == 'ns':
            return '%.3g %s' % (seconds / scale, unit)


def _distributions():
    import importlib.metadata as metadata
    found = {}
    for dist in metadata.distributions():
        try:
            name = (dist.metadata['Name'] or '').lower().replace('_', '-')
        except Exception:
            continue
        if name:
            found[name] = dist.version
    return found


def _top_level_owners():
    """Top-level import name -> normalized distribution names."""
    import importlib.metadata as metadata
    try:
        mapping = metadata.packages_distributions()
    except AttributeError:  # Python < 3.10
        return {}
    return {top: {d.lower().replace('_', '-') for d in dists} for top, dists in mapping.items()}


def _pip(args):
    """`%pip ...`: pip of this kernel's interpreter, then evict what changed."""
    import importlib
    import shlex
    import subprocess
    before = _distributions()
    owners_before = _top_level_owners()
    _flush()
    # No progress bars: they are redrawn lines that would fill the cell's output budget.
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK='1', PIP_YES='1', PIP_NO_INPUT='1',
               PIP_PROGRESS_BAR='off')
    completed = subprocess.run([sys.executable, '-m', 'pip'] + shlex.split(args),
                               stdin=subprocess.DEVNULL, env=env)
    importlib.invalidate_caches()
    _note_installed()  # its evictions are done here, not again before the next cell
    after = _distributions()
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    if completed.returncode != 0:
        print('pip exited with status %d' % completed.returncode)
    if not changed:
        return None
    owners = _top_level_owners()
    tops = {top for mapping in (owners_before, owners) for top, dists in mapping.items()
            if dists & changed}
    message = evict(sorted(tops))
    if message:
        print(message)
    return None


def evict(tops):
    """Drops the loaded modules of the given top-level packages so the next import loads the
    new version; a package with a loaded compiled extension cannot be reloaded safely, so it
    is left alone and a reset is recommended. Returns a note for the user."""
    from importlib.machinery import ExtensionFileLoader, EXTENSION_SUFFIXES
    evicted, compiled = [], []
    for top in tops:
        names = [name for name in list(sys.modules) if name == top or name.startswith(top + '.')]
        if not names:
            continue
        extension = None
        for name in names:
            module = sys.modules.get(name)
            spec = getattr(module, '__spec__', None)
            loader = getattr(spec, 'loader', None)
            filename = getattr(module, '__file__', None) or ''
            if isinstance(loader, ExtensionFileLoader) or filename.endswith(tuple(EXTENSION_SUFFIXES)):
                extension = name
                break
        if extension is not None:
            compiled.append('%s (compiled extension %s)' % (top, extension))
            continue
        for name in names:
            sys.modules.pop(name, None)
        evicted.append(top)
    notes = []
    if evicted:
        notes.append('Evicted %s from sys.modules: the next import loads the installed version.'
                     % ', '.join(evicted))
    if compiled:
        notes.append('A reset is needed to use the new version of %s: a loaded compiled '
                     'extension cannot be replaced in a running interpreter (call eval with '
                     'reset: true).' % ', '.join(compiled))
    return ' '.join(notes)

# ---------------------------------------------------------------------------------------
# Code that changed on disk between cells: the agent's edits, a `git checkout`, a
# `pip install` in a shell. A running interpreter keeps what it imported; each cell first
# reloads the project's changed modules and evicts the packages installed over, and says so.

_ROOT = os.path.realpath(os.getcwd())
_stamps = {}          # module name -> (file, (mtime_ns, size)) of the project's own modules
_looked_at = {}       # module name -> id of the module object last looked at
_installed = None     # sys.path folder -> (its stat, its distributions' metadata folders)


def _stat(path):
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size)


def _project_file(module):
    """The source file of a module of the project (under the kernel's root, not installed)."""
    file = getattr(module, '__file__', None)
    if not isinstance(file, str) or not file.endswith('.py'):
        return None
    file = os.path.realpath(file)
    if not file.startswith(_ROOT + os.sep) or 'site-packages' in file or 'dist-packages' in file:
        return None
    return file


def _stamp_modules():
    """Remembers the file state of project modules imported since the last look."""
    for name in [name for name in _stamps if name not in sys.modules]:
        del _stamps[name]
    for name, module in list(sys.modules.items()):
        # Each module object is looked at once: a cell's cost stays independent of how
        # many modules are loaded.
        if _looked_at.get(name) == id(module) or name == '__main__':
            continue
        _looked_at[name] = id(module)
        file = _project_file(module)
        if file is not None:
            _stamps[name] = (file, _stat(file))


def _installed_now(before=None):
    """Each sys.path folder's metadata folders; a folder whose own stat did not change since
    `before` is not listed again (an install adds a folder there, which changes it)."""
    found = {}
    for entry in sys.path:
        stamp = _stat(entry or '.')
        if stamp is None:
            continue
        if before and entry in before and before[entry][0] == stamp:
            found[entry] = before[entry]
            continue
        try:
            names = os.listdir(entry or '.')
        except OSError:
            continue
        found[entry] = (stamp, {n for n in names if n.endswith(('.dist-info', '.egg-info'))})
    return found


def _note_installed():
    global _installed
    _installed = _installed_now()


def _dist_name(folder):
    """`Name-1.0.dist-info` -> `name`."""
    return folder.rsplit('.', 1)[0].split('-')[0].lower().replace('_', '-')


def _reload_changed():
    import importlib
    changed = [name for name, (file, stamp) in _stamps.items()
               if name in sys.modules and _stat(file) != stamp]
    if not changed:
        return []
    importlib.invalidate_caches()
    # A module is in sys.modules before what it imports: the reverse order reloads a
    # module's imports before it.
    order = {name: at for at, name in enumerate(sys.modules)}
    reloaded, failed = [], []
    for name in sorted(changed, key=lambda n: order.get(n, 0), reverse=True):
        file = _stamps[name][0]
        _stamps[name] = (file, _stat(file))
        try:
            importlib.reload(sys.modules[name])
            reloaded.append(name)
        except BaseException as caught:  # the module's own code failed, or its file is gone
            failed.append('%s (%s: %s)' % (name, type(caught).__name__, caught))
    notes = []
    if reloaded:
        notes.append('Reloaded %s: changed on disk since imported. Objects made before, and '
                     'names bound with `from ... import`, keep the old code; reset for a clean '
                     'state.' % ', '.join(reloaded))
    if failed:
        notes.append('Changed on disk but not reloaded, the old code stays: %s.'
                     % '; '.join(failed))
    return notes


def _evict_installed():
    import importlib
    global _installed
    before = _installed
    now = _installed_now(before)
    _installed = now
    if before is None or before == now:
        return []
    importlib.invalidate_caches()
    old = set().union(*(names for _, names in before.values()))
    new = set().union(*(names for _, names in now.values()))
    changed = {_dist_name(folder) for folder in old ^ new}
    if not changed:
        return []
    tops = {top for top, dists in _top_level_owners().items() if dists & changed}
    message = evict(sorted(tops))
    return [message + ' (installed outside the kernel)'] if message else []


def _catch_up_with_disk():
    """Before a cell: the project's changed modules reloaded, packages installed over
    evicted; what was done is printed, so that the cell's output says it."""
    try:
        notes = _evict_installed() + _reload_changed()
    except Exception as caught:  # never stop a cell for this
        notes = ['Could not check for code changed on disk: %s' % caught]
    for note in notes:
        print(note)


# ---------------------------------------------------------------------------------------
# Running cells.

_flags = 0        # __future__ flags of earlier cells
_loop = None      # the event loop kept across cells for top-level await
_running = None   # the id of the cell whose user code runs now
_run_lock = threading.Lock()


def _future_flags(code):
    import __future__
    global _flags
    for name in __future__.all_feature_names:
        flag = getattr(__future__, name).compiler_flag
        if code.co_flags & flag:
            _flags |= flag


def _run_code(code):
    if code.co_flags & CO_COROUTINE:
        return _run_async(eval(code, NS))
    return eval(code, NS)


def _run_async(coroutine):
    global _loop
    import asyncio
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    asyncio.set_event_loop(_loop)
    task = _loop.create_task(coroutine)
    try:
        return _loop.run_until_complete(task)
    except BaseException:
        if not task.done():
            task.cancel()
            try:
                _loop.run_until_complete(task)
            except BaseException:
                pass
        raise


def _suppressed(code, node):
    """A trailing `;` after the last expression suppresses its echo."""
    lines = code.splitlines(True)
    line = lines[node.end_lineno - 1].encode('utf-8')
    rest = line[node.end_col_offset:].decode('utf-8', 'replace') + ''.join(lines[node.end_lineno:])
    return rest.lstrip().startswith(';')


def _execute(code, cell):
    if '%' in code or '!' in code:
        code = _transform(code)
    filename = '<cell-%d>' % cell
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    flags = _flags | TLA
    tree = compile(code, filename, 'exec', ast.PyCF_ONLY_AST | flags, dont_inherit=True)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not _suppressed(code, tree.body[-1]):
        last = tree.body.pop()
    if tree.body:
        compiled = compile(tree, filename, 'exec', flags, dont_inherit=True)
        _future_flags(compiled)
        _run_code(compiled)
    if last is None:
        return None
    expression = ast.Expression(last.value)
    compiled = compile(expression, filename, 'eval', _flags | TLA, dont_inherit=True)
    value = _run_code(compiled)
    if value is None:
        return None
    NS['_'] = value
    return _echo(value)


def _format_error(error):
    tb = error.__traceback__
    user = tb
    while user is not None and not user.tb_frame.f_code.co_filename.startswith('<cell-'):
        user = user.tb_next
    if user is None:
        user = tb
        while user is not None and user.tb_frame.f_code.co_filename == DRIVER_FILE:
            user = user.tb_next
    summary = traceback.TracebackException(type(error), error, user)
    _drop_driver_frames(summary, set())
    text = ''.join(summary.format())
    try:
        value = str(error)
    except Exception:
        value = '<str() of the exception failed>'
    return {'ename': type(error).__name__, 'evalue': _clean(value), 'traceback': _clean(text)}


def _drop_driver_frames(summary, seen):
    # The SIGINT handler and the bridge add frames of this file; they are noise to the user.
    if summary is None or id(summary) in seen:
        return
    seen.add(id(summary))
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack if frame.filename != DRIVER_FILE])
    _drop_driver_frames(summary.__cause__, seen)
    _drop_driver_frames(summary.__context__, seen)


def _barrier(cell):
    """Marks the end of the cell's output on stdout and stderr (see kernel-bridge/src/scan.rs)."""
    _flush()
    marker = ('\x1e\x1ecc:%s:%d\x1e\x1e' % (NONCE, cell)).encode()
    written = []
    for fd in (1, 2):
        try:
            os.write(fd, marker)
            written.append(True)
        except OSError:
            written.append(False)
    return written


def _run_cell(message):
    global _running, _cell
    cell = message['cell']
    _cell = cell
    result = error = None
    try:
        try:
            with _run_lock:
                _running = cell
            _catch_up_with_disk()
            result = _execute(message['code'], cell)
        finally:
            _running = None
    except BaseException as caught:  # the cell's exception, KeyboardInterrupt and SystemExit too
        _running = None
        error = _format_error(caught)
        del caught
    try:
        _show_open_figures()
    except BaseException as caught:
        error = error or _format_error(caught)
    try:
        _stamp_modules()
        if _installed is None:
            _note_installed()
    except Exception:
        pass
    _shown.clear()
    barrier = _barrier(cell)
    _cell = None
    send({'op': 'done', 'cell': cell, 'result': result, 'error': error, 'barrier': barrier})


def _on_sigint(signum, frame):
    # Interrupts only ever target user code; one arriving after its cell ended is dropped.
    if _running is not None:
        raise KeyboardInterrupt


_jobs = _queue.SimpleQueue()


def _interrupt(cell):
    with _run_lock:
        if _running is not None and _running == cell:
            signal.pthread_kill(MAIN_IDENT, signal.SIGINT)


def _reader():
    stream = os.fdopen(IN_FD, 'rb', buffering=65536)
    try:
        for line in stream:
            if not line.strip():
                continue
            message = json.loads(line)
            op = message.get('op')
            if op == 'exec':
                _jobs.put(message)
            elif op == 'reply':
                with _pending_lock:
                    slot = _pending.get(message.get('id'))
                if slot is not None:
                    slot[1] = message
                    slot[0].release()
            elif op == 'interrupt':
                _interrupt(message.get('cell'))
            elif op == 'shutdown':
                _jobs.put(None)
    except Exception as error:
        sys.stderr.write('cc kernel driver: control channel failed: %r\n' % (error,))
    # The host closed the channel (or it broke): nobody is listening any more.
    _flush()
    os._exit(0)


def _main_loop():
    global _running
    signal.signal(signal.SIGINT, _on_sigint)
    threading.Thread(target=_reader, name='cc-control', daemon=True).start()
    send({'op': 'ready', 'version': sys.version.split()[0], 'executable': sys.executable,
          'pid': os.getpid()})
    while True:
        try:
            message = _jobs.get()
            if message is None:
                break
            _run_cell(message)
        except KeyboardInterrupt:
            _running = None  # a late interrupt between cells
    _flush()
    os._exit(0)


_main_loop()
