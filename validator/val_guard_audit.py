# codeq runtime guard, part 1: the audit hook. val_policy.c puts this file between the
# generated `_CODEQ_POLICY = {...}` line and val_guard.py, which calls _codeq_audit_hook() just
# before main.py runs. It is a file of its own because it is a concern of its own: the guard's
# proxies and builtins filter names; this sees operations, whatever name led to them.
#
# Objects the job legitimately holds lead to constructors no proxy filters (type() of
# sys.stdin.buffer.raw is io.FileIO), and allowed modules evaluate strings (typing's
# ForwardRef, dataclasses' and namedtuple's generated functions). CPython reports both to
# audit hooks ("open" with the path actually opened, "exec" with the code object actually
# run), which the job cannot remove or see. After main.py starts:
# - open: the standard library's own files and main.py/the guard read-only (imports,
#   tracebacks), descriptors 0-2, and under files: workdir, the working directory; nothing
#   else, whichever object did the opening.
# - exec: module code of the standard library during an import, and code built by the
#   three known builders when every name in it passes the getattr rules (a ForwardRef
#   also: no calls, no private names, no other module's globals). Anything else that turns
#   a string into running code is refused.
# - pickle.find_class: only what the job's own imports would give it (a proxy's view: no
#   restricted attribute, private name or module), and numpy's reconstructors.
# - object.__getattr__/__setattr__/__delattr__ (what leads to code or rebinds it: __code__,
#   __defaults__, tb_frame, __class__, ...): a denied name never read by the job's own code,
#   and written only by the few libraries that do it to an object they have just made.
# - processes, signals, sockets, any ctypes call, changes to the file system, new code objects,
#   tracing, walks of the garbage collector's object lists: refused outright (no allowed module
#   does them for a job); directory listings only of sys.path and the working directory.
#
# The hook is a closure: the job cannot reach it, and CPython offers no way to list or remove
# audit hooks. _sys._getframe(1) in it is the Python frame whose C call raised the event.
import builtins as _builtins
import opcode as _opcode
import os as _os
import sys as _sys
import types as _types

# The guard's own module name, not __main__ (the job's): a class the guard makes (GuardedModule,
# ...) is then never taken for one the job made, whose classes stay writable
# (_codeq_class_sealer in val_guard.py).
__name__ = "codeq guard"


def _codeq_audit_hook(policy, job, denied_name, module_allowed, denied_attrs,
                      refused_names, exposed, c_arm):
    """(hook, positional_match, library_file, bind, imported_tops, arm) for the policy; job["main"] and
    job["code"] are main.py's module and code object, set before the hook is installed;
    exposed(obj) says whether a proxy module would hand obj to the job as it is; c_arm is
    _codeq_seal.arm (sandbox/sbx_zygote_wall.c).
    bind() reads the job's working directory and sys.path: the hook may be built ahead of the
    job (a zygote prepares the guard once), so it is called when the job starts."""
    cwd, read_roots, own_files = None, (), ()

    def under(path, root):
        return path == root or path.startswith(root + _os.sep)

    def bind():
        nonlocal cwd, read_roots, own_files
        cwd = _os.path.realpath(_os.getcwd())
        paths = (_os.path.realpath(p) for p in _sys.path if isinstance(p, str) and p)
        read_roots = tuple(r for r in paths if not under(r, cwd) and not under(cwd, r))
        own_files = (_os.path.join(cwd, "main.py"), _os.path.join(cwd, "_codeq_prelude.py"))
    write_flags = _os.O_WRONLY | _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC | _os.O_APPEND

    def open_allowed(path, mode, flags):
        if type(path) is int:
            return 0 <= path <= 2
        if type(path) is not str and type(path) is not bytes:
            return False  # library code opens plain paths; the job's open() converts first
        real = _os.path.realpath(path)
        if isinstance(real, bytes):
            real = _os.fsdecode(real)
        if policy["files"] == "workdir" and under(real, cwd):
            return True
        if (isinstance(flags, int) and flags & write_flags) or \
                any(ch in (mode if isinstance(mode, str) else "w") for ch in "wax+"):
            return False
        return real in own_files or any(under(real, root) for root in read_roots)

    builder_names = frozenset({"__create_fn__", "__dataclass_builtins_object__", "__class__",
                               "__dataclass_self__", "__qualname__", "__post_init__"})
    builder_globals = frozenset(n for n in vars(_builtins) if not n.startswith("_")) | {
        "_tuple_new"}
    ops = _opcode.opmap
    call_ops = frozenset(ops[n] for n in ("CALL", "PRECALL", "CALL_FUNCTION_EX") if n in ops)

    def dunders_in(text):
        if "__" not in text:
            return ()
        import re  # only when a builder's string spells a dunder (rare): not on every start
        return re.findall(r"__\w+__", text)

    def instructions(code):
        raw, ext = code.co_code, 0
        for i in range(0, len(raw), 2):
            op, arg = raw[i], raw[i + 1] | ext
            ext = arg << 8 if op == _opcode.EXTENDED_ARG else 0
            yield op, arg

    def global_reads(code):
        """The names the code looks up as globals or builtins (not attributes, not locals)."""
        for op, arg in instructions(code):
            if op == ops["LOAD_GLOBAL"]:
                yield code.co_names[arg >> 1]
            elif op == ops["LOAD_NAME"]:
                yield code.co_names[arg]

    def nested(code):
        """The code object and every one nested in it, without recursion: lambdas nested a few
        hundred deep compile, and a recursive walk ran out of stack in the guard (the job got
        a RecursionError of ours, reported as its own output_limit)."""
        todo = [code]
        while todo:
            c = todo.pop()
            yield c
            todo.extend(k for k in c.co_consts if isinstance(k, _types.CodeType))

    def imported_tops(code):
        """The top-level modules the code's import statements name (nested code too)."""
        for c in nested(code):
            for op, arg in instructions(c):
                if op == ops["IMPORT_NAME"]:
                    yield c.co_names[arg].partition(".")[0]

    def positional_match(code):
        return any(op == ops["MATCH_CLASS"] and arg for c in nested(code)
                   for op, arg in instructions(c))

    def code_ok(code, expression):
        """Code an allowed module built from strings is run only if it could have been
        written by a program the static rules accept: no denied dunder or introspection name
        read, bound or spelled in a string (a format field), no dangerous builtin looked up;
        an expression (a ForwardRef) also calls nothing and reads no private name. Field
        names like `format` or `input` stay usable: only lookups of builtins are refused.
        Builder code may look up no global but a builtin (see below)."""
        own = () if expression else builder_names
        for n in code.co_names + code.co_varnames + code.co_freevars + code.co_cellvars:
            if n not in own and (denied_name(n) or (expression and n.startswith("_"))):
                return False
        for n in global_reads(code):
            # A builder's globals are the class's module (dataclasses: cls.__module__, which
            # the program sets), so its other names (that module's imports and privates) are
            # no builder's business: they read only builtins, and namedtuple its _tuple_new.
            if n in refused_names or not (expression or n in builder_globals):
                return False
        if expression and any(op in call_ops for op in code.co_code[::2]):
            return False
        for c in code.co_consts:
            if isinstance(c, str) and any(m not in own and denied_name(m)
                                          for m in dunders_in(c)):
                return False
            if isinstance(c, _types.CodeType) and (expression or not code_ok(c, False)):
                return False
        return True

    def own_dict(ns):
        """Not the namespace of a loaded module other than the job's own."""
        return ns is None or ns is job["main"].__dict__ or not any(
            ns is vars(m) for m in list(_sys.modules.values()) if isinstance(m, type(_sys)))

    def module_code(code, modname):
        """code is of the loaded module modname, told by its file."""
        mod = _sys.modules.get(modname)
        return mod is not None and code.co_filename == getattr(mod, "__file__", None)

    def library_code(code, modname, qualname):
        """code is modname's function qualname, told by its file and name, which the job cannot
        forge (it makes no code objects); not by the class or module attribute, which it can
        rebind (type.__setattr__(typing.NamedTupleMeta, '__n' + 'ew__', its own function))."""
        return code.co_qualname == qualname and module_code(code, modname)

    def library_file(path):
        """A file of the standard library (or another sys.path entry), not the job's."""
        return type(path) is str and (path.startswith("<frozen ") or any(
            under(_os.path.realpath(path), r) for r in read_roots))

    def exec_allowed(code, frame):
        caller = frame.f_code
        if code is job["code"]:
            return True
        if caller.co_filename.startswith("<frozen importlib"):
            return library_file(code.co_filename)
        if library_code(caller, "collections", "namedtuple") or \
                library_code(caller, "dataclasses", "_create_fn"):
            return code_ok(code, False)
        if library_code(caller, "typing", "ForwardRef._evaluate"):
            ns = frame.f_locals
            return code_ok(code, True) and own_dict(ns.get("globalns")) and \
                own_dict(ns.get("localns"))
        return False

    def shown(path):
        return repr(path) if type(path) in (str, bytes, int) else type(path).__name__

    own_globals = globals()  # the guard's own functions' (this prelude's, not main.py's)

    def job_code(code):
        """Code the job wrote (main.py) or had a builder make from its strings ("<string>":
        namedtuple, dataclasses, ForwardRef; the hook lets no other string become code). The job
        makes no code objects of its own, so no other file name is the job's."""
        return code.co_filename in (_JOB_FILE, "<string>")  # noqa: F821 (val_guard.py)

    # Library code that rebinds a denied attribute of an object it has just made, for its own
    # reasons: (module, function, the local that holds the object). namedtuple sets its
    # __new__'s defaults, typing.NamedTuple its class's __bases__, numpy.ma a masked constant's
    # view's class. Only that object: the frame that raises the event need not be what chose
    # the write (a C-only chain the job handed over runs in whichever frame consumes it:
    # namedtuple(defaults=map(object.__setattr__, ...))).
    writers = (("collections", "namedtuple", "__new__"),
               ("typing", "NamedTupleMeta.__new__", "nm_tpl"),
               ("numpy.ma.core", "MaskedConstant.__array_finalize__", "self"))

    def library_writer(frame, target):
        """One of `writers` writing to its own object, or the guard's proxy() giving a proxy
        its class. (numpy's dispatch decorator renames its wrappers' __code__ with
        code.replace, refused as code.__new__: a numpy submodule that uses it cannot be first
        imported under the hook, as before.)"""
        code, local = frame.f_code, frame.f_locals
        if any(library_code(code, mod, qualname) and local.get(name) is target
               for mod, qualname, name in writers):
            return True
        return frame.f_globals is own_globals and code.co_name == "proxy" and \
            local.get("p") is target

    # numpy functions that look names up in their caller's namespace (np.bmat("a b"),
    # np.r_["a, b"], np.who()). Called by library code (np.vectorize running the function it
    # was given, string.Template looking a name up), that namespace is a module's real
    # globals and locals (sys, builtins), and the names are the job's: the objects found went
    # on to a job object (bypasses 133, 134). Only main.py's own code may call them so; told
    # by the code objects, which the job cannot forge.
    caller_lookups = (("numpy.matrixlib.defmatrix", "bmat"),
                      ("numpy.lib.index_tricks", "AxisConcatenator.__getitem__"),
                      ("numpy.lib.utils", "who"))

    def caller_lookup_allowed(frame):
        """frame: what sys._getframe returns (these functions ask for their own). Its globals
        are looked at first: reading f_code is an audit event of its own, and so is the hook's
        own sys._getframe."""
        for modname, qualname in caller_lookups:
            mod = _sys.modules.get(modname)
            if mod is not None and frame.f_globals is vars(mod) and \
                    library_code(frame.f_code, modname, qualname):
                caller = frame.f_back
                return caller is not None and \
                    caller.f_code.co_filename == _JOB_FILE  # noqa: F821
        return True

    # What CPython audits of attribute access is what leads to code or rebinds it: reading a
    # function's __code__/__defaults__/__kwdefaults__, a frame's f_code, tb_frame, gi_/cr_/ag_
    # frame and code; writing __class__, __code__, __defaults__, __kwdefaults__; deleting the
    # defaults. The job spells none of these (the static rules), but names built at run time
    # reach them without getattr: object.__setattr__(f, '__def' + 'aults__', v), a map() over
    # it, copy's setattr of a __reduce_ex__'s slot state, a pickle's BUILD. A write passes only
    # as library_writer() says, whoever raised it: library code may be running what the job
    # handed over, and import-time code may read objects the job changed (bypass 126).
    attribute_verbs = {"object.__getattr__": "reading", "object.__setattr__": "writing",
                       "object.__delattr__": "deleting"}

    # The library code whose purpose is to read frames and code (attribute_allowed).
    frame_readers = ("inspect", "traceback", "logging", "asyncio.coroutines",
                     "asyncio.format_helpers", "asyncio.base_tasks")

    def attribute_allowed(event, target, frame):
        """For a denied name (audit() asks only then, before it takes the frame)."""
        if event != "object.__getattr__":
            return frame is not None and library_writer(frame, target)
        # Reads: the guard's own frames read the frames and code this hook inspects (each such
        # read is an event too: judging it by its f_code would recurse). Else only the library
        # code whose purpose is to read them (a signature, a traceback, a log record's
        # caller), told by its file: whichever frame raised the event may be running a
        # C-only chain the job handed over, or forwarding a name the job chose (typing's
        # aliases pass any non-dunder name to getattr: gi_frame, bypass 135), and one frame
        # leads to every namespace through f_back and f_globals, which are not audited.
        if frame is None or frame.f_globals is own_globals:
            return True
        return any(module_code(frame.f_code, name) for name in frame_readers)

    # A pickle (numpy.load(allow_pickle=True) under data) names its globals as module.name
    # strings, and _pickle resolves them with the real import and getattr: it may hand out only
    # what the job's own imports would (a proxy's view), or the job holds the real sys.modules,
    # random._os or a module namespace. Private names are refused but for numpy's reconstructors.
    reconstructors = frozenset({("numpy.core.multiarray", "_reconstruct"),
                                ("numpy.core.numeric", "_frombuffer"),
                                ("numpy.ma.core", "_mareconstruct"),
                                ("numpy.core", "_DType_reconstruct"),
                                ("numpy.random._pickle", "__randomstate_ctor"),
                                ("numpy.random._pickle", "__generator_ctor"),
                                ("numpy.random._pickle", "__bit_generator_ctor"),
                                ("re", "_compile"), ("array", "_array_reconstructor")})
    ufunc_home = "numpy.core._multiarray_umath"  # where a ufunc's pickle names it
    restricted = policy["module_attributes"]
    module_type, drop = type(_sys), object()

    def unpickle_allowed(module, name):
        if type(module) is not str or type(name) is not str:
            return False
        # With fix_imports (protocols 0-2) _pickle renames Python 2 globals after this event.
        import _compat_pickle as compat
        fixed = compat.NAME_MAPPING.get((module, name)) or \
            (compat.IMPORT_MAPPING.get(module, module), name)
        pairs = {fixed} if module == "__builtin__" else {(module, name), fixed}  # no such module
        return all(global_allowed(m, n) for m, n in pairs)

    def own_global(module, name):
        """builtins and __main__, by one plain name: only what the job's own builtins (not
        a guard's replacement: enum members pickle as getattr) and globals already hold."""
        if module == "builtins":
            value = job["builtins"].get(name, drop)
            real = vars(_builtins).get(name)
        else:
            main = job.get("main")
            value = vars(main).get(name, drop) if main is not None else drop
            real = value if _sys.modules.get("__main__") is main else drop
        return "." not in name and value is not drop and value is real and \
            not isinstance(value, module_type)

    def global_allowed(module, name):
        if module in ("builtins", "__main__"):
            return own_global(module, name)
        parts = name.split(".")
        if not module_allowed(module) or (module in restricted and
                                       parts[0] not in restricted[module]):
            return False
        ufunc = module == ufunc_home and len(parts) == 1 and not name.startswith("_")
        if (module, name) not in reconstructors and not ufunc and \
                any(p.startswith("_") for p in module.split(".") + parts):
            return False
        if any(denied_name(p) or p in refused_names or p in denied_attrs.get(module, ())
               for p in parts):
            return False
        obj = _sys.modules.get(module)
        if obj is None:
            _builtins.__import__(module)  # an allowed module: the job could import it itself
            obj = _sys.modules.get(module)
        for p in parts:
            obj = getattr(obj, p, drop)
            if obj is drop:
                return False  # and not left to _pickle's own lookup, which could differ
            if isinstance(obj, module_type) or not exposed(obj):
                return False  # the job gets proxies of modules, and checked getattr & co.
        return not ufunc or type(obj) is getattr(_sys.modules.get("numpy"), "ufunc", None)

    # Operations no allowed module performs on a job's behalf: refused whoever asks (os.system
    # reached through some function's globals, ...). The sandbox stops them too; this says so
    # early and by name. Listing a directory is left to imports (sys.path) and the workdir.
    refused_events = frozenset({
        "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
        "os.kill", "os.killpg", "subprocess.Popen", "socket.__new__", "socket.connect",
        "socket.bind", "socket.getaddrinfo",
        "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.chmod",
        "os.chown", "os.truncate", "os.chdir", "os.putenv", "os.unsetenv", "os.setxattr",
        "os.removexattr", "os.utime", "code.__new__", "sys.settrace", "sys.setprofile",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents"})
    # Every ctypes operation, not only loading a library: numpy hands out the real ctypes
    # module (ndarray.ctypes._ctypes), whose string_at, memmove and cast read and write any
    # address (bypass 115). The gc walks lead to every object, the guard's own included (114).
    refused_prefixes = ("ctypes.",)

    def arm():
        """The rules above whose only inputs are an event's arguments (refused events, open,
        listings, compile from the job's code) are kept again in C: their state is then
        beyond the job's reach even if this closure's cells are not (bypass 168 rewrote
        them). Called once, after bind(), before the hook is added."""
        c_arm(policy["name"], _JOB_FILE, cwd, read_roots, own_files,  # noqa: F821
              policy["files"] == "workdir", refused_events, refused_prefixes)

    def listing_allowed(path):
        if type(path) is not str and type(path) is not bytes:
            return False
        real = _os.path.realpath(path)
        real = _os.fsdecode(real) if isinstance(real, bytes) else real
        return under(real, cwd) or any(under(real, root) for root in read_roots)

    def audit(event, args):
        if event in refused_events or event.startswith(refused_prefixes) or \
                (event in ("os.listdir", "os.scandir") and not listing_allowed(args[0])):
            raise PermissionError(f"codeq guard: {event} is not allowed by policy "
                                  f"{policy['name']}")
        if event == "open" and not open_allowed(*args[:3]):
            raise PermissionError(f"codeq guard: opening {shown(args[0])} is not allowed by "
                                  f"policy {policy['name']}")
        if event == "pickle.find_class" and not unpickle_allowed(*args[:2]):
            raise PermissionError(f"codeq guard: unpickling {shown(args[0])}.{shown(args[1])} "
                                  f"is not allowed by policy {policy['name']}")
        if event in attribute_verbs and len(args) > 1 and denied_name(args[1]) and \
                not attribute_allowed(event, args[0], _sys._getframe(1)):
            raise PermissionError(f"codeq guard: {attribute_verbs[event]} attribute "
                                  f"{shown(args[1])} is not allowed by policy {policy['name']}")
        if event == "sys._getframe" and not caller_lookup_allowed(args[0]):
            raise PermissionError("codeq guard: numpy's lookup of names in its caller's frame "
                                  "is allowed only when the job's own code calls it, by "
                                  f"policy {policy['name']}")
        # The job has no compile(); one it calls is the real one reached by a leak, and its
        # code object runs without an "exec" event once made a function.
        if event == "compile" and job_code(_sys._getframe(1).f_code):
            raise PermissionError("codeq guard: compiling a string is not allowed by policy "
                                  f"{policy['name']}")
        if event == "exec" and not exec_allowed(args[0], _sys._getframe(1)):
            raise PermissionError("codeq guard: running code built from a string is not "
                                  f"allowed by policy {policy['name']}")

    return audit, positional_match, library_file, bind, imported_tops, arm
