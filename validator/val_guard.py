# codeq runtime guard: the validator's policy again, inside the sandboxed interpreter.
#
# The worker writes this file (after a `_CODEQ_POLICY = {...}` line generated from the
# operator's policy) beside main.py as _codeq_prelude.py, and the interpreter runs it instead of
# main.py. It is a second filter behind the static validator, for what static analysis cannot
# see (names built at run time: __import__('o' + 's')); the sandbox stays the security boundary.
#
# What it does, and why this way:
# - The job gets its own builtins dict. Allowed modules' own code keeps the real builtins (their
#   internal and deferred imports, open() in linecache, ... work); only code compiled from
#   main.py sees the restricted one, because a frame's builtins come from its globals.
# - Imports by the job go through guarded_import (the job's __import__): top-level name on the
#   allowlist, no relative imports, and what the job receives is a proxy module: a copy of the
#   module's public attributes without private names, without attributes that are modules
#   outside the allowlist (queue.threading, random._os) and, for modules the policy restricts
#   (sys), with only the listed attributes. The real module stays intact for its own functions.
# - A sys.meta_path finder refuses to load a new module outside the allowlist when the import
#   is made directly from main.py's code; imports made by library code are left alone.
# - getattr/setattr/delattr/hasattr refuse the same attribute names the static rules deny, and
#   so do operator.attrgetter/methodcaller, replaced in every proxy by what they are (identity),
#   not by the name a module gives them.
# - An audit hook sees what objects the job holds lead to: every file opened (type() of
#   sys.stdin.buffer.raw is io.FileIO), every code object run (library code that evals a
#   string: typing.ForwardRef, dataclasses' generated methods), every class a pickle resolves.
#   See val_guard_audit.py (put before this file in the prelude).
# - What it cannot do: CPython has no way to hide attributes of objects the job legitimately
#   holds (a function's __globals__, a type's __subclasses__); those are the static rules' job,
#   and whatever gets past both meets the sandbox.
# - main.py runs as module __main__ (a fresh module, so dataclasses/typing/pickle find it),
#   compiled from its bytes under the name "main.py": tracebacks and line numbers are those of
#   a direct run, the guard's own frame is cut from them, an uncaught exception exits 1 and
#   SystemExit keeps its code. In zygote mode the sandbox may hand over main.py already compiled
#   (`_CODEQ_MAIN_CODE`: the worker's validator compiled the tree it checked, under the same
#   name); it is then run instead of compiling the source again, with every check below the same.
import builtins as _builtins
import io as _io
import os as _os
import sys as _sys
import types as _types

_JOB_FILE = "main.py"


_SEAL_FD = 5  # sandbox/sbx_int.h, SBX_FD_SEAL


def _codeq_seal_module():
    """_codeq_seal (sandbox/sbx_zygote_seal.c): the steps Python code cannot take, and the
    audit rules kept where the job's code cannot reach them. A zygote has it built in. An
    exec'd interpreter gets the same module's shared object from the sandbox as descriptor
    _SEAL_FD (sandbox/sbx_seal.c), never from sys.path: loaded from there before the hook and
    any of the job's code, and the descriptor closed. Neither: the guard does not start
    (ImportError), rather than keep its state where a leak reaches it."""
    if "_codeq_seal" in _sys.builtin_module_names:
        import _codeq_seal
        return _codeq_seal
    from importlib.machinery import ExtensionFileLoader, ModuleSpec
    path = f"/proc/self/fd/{_SEAL_FD}"
    try:
        loader = ExtensionFileLoader("_codeq_seal", path)
        return loader.create_module(ModuleSpec("_codeq_seal", loader, origin=path))
    except ImportError as e:
        raise ImportError(f"codeq guard: no _codeq_seal module: {e}") from None
    finally:
        try:
            _os.close(_SEAL_FD)
        except OSError:
            pass


def _codeq_class_sealer(seal_module):
    """(seal, guard_str_format). seal(): makes every class made by Python code so far
    immutable, as built-in types are (sandbox/sbx_zygote_seal.c says why): a walk of every
    class from object, each heap type not yet immutable given the flag.
    guard_str_format(format, format_map): puts the guard's two formatters into str's own dict,
    once. Both are seal_module's."""
    heap, immutable = 1 << 9, 1 << 8  # Py_TPFLAGS_HEAPTYPE, Py_TPFLAGS_IMMUTABLETYPE
    seal_class, guard_str_format = seal_module.seal_class, seal_module.guard_str_format

    # Read through type's own descriptors: a job's metaclass could answer cls.__flags__ or
    # cls.__module__ with code of its own, run here.
    flags_of = type.__dict__["__flags__"].__get__
    module_of = type.__dict__["__module__"].__get__

    def seal(modules=None):
        """modules: only the classes these modules define (just loaded, while another import
        may be in progress: see PatchingLoader)."""
        seen, stack = set(), [object]
        while stack:
            cls = stack.pop()
            if id(cls) in seen:
                continue
            seen.add(id(cls))
            if flags_of(cls) & (heap | immutable) == heap and not jobs_own(cls) and \
                    (modules is None or exact_str(module_of(cls)) in modules):
                seal_class(cls)
            stack.extend(type.__subclasses__(cls))

    def exact_str(name):
        return name if type(name) is str else None  # never a job's object's __hash__ or __eq__

    def jobs_own(cls):
        """A class main.py made (class statement, type(), namedtuple, Enum(...)): its module is
        __main__. The job's classes stay its own to change after it imports a module. A library
        class renamed so is one the job could already write to."""
        name = module_of(cls)
        return type(name) is str and name == "__main__"
    return seal, guard_str_format


def _codeq_prepare(policy):
    """The job-independent part of the guard, for the policy; returns start()."""
    allowed = frozenset(policy["modules"])
    restricted = {k: frozenset(v) for k, v in policy["module_attributes"].items()}
    denied_attrs = {k: frozenset(v) for k, v in policy["denied_attributes"].items()}
    harmless = frozenset(policy["harmless_dunders"])
    introspection = frozenset(policy["introspection"])
    real_import = _builtins.__import__
    real_getattr, real_setattr = getattr, setattr
    real_delattr, real_hasattr = delattr, hasattr
    module_type = _types.ModuleType
    proxies = {}
    deferred = {}  # module name -> its proxy's submodules proxied on first access (proxy())
    late = {}  # module name -> {leaf: full name}: links for a proxy not built yet (link())
    forwarded = {}  # id(proxy) -> (real module, names allowed): see ForwardingModule
    real_names = {}  # id(proxy) -> its module's name: see GuardedModule.__name__

    class GuardedModule(module_type):
        """A proxy: its dunders are the guard's. CPython's IMPORT_FROM, when a name is not on
        the module it got, takes sys.modules[module.__name__ + "." + name], the real module:
        with `json.__name__ = "os"` that was posixpath, with `json.__getattr__` replaced by one
        that raises, json.decoder (rtA 02, 08). So no dunder of a proxy is written or deleted
        by the job, whatever it is (module's own setattr raises no audit event)."""

        @property
        def __name__(self):
            """The real module's name, whatever the proxy's dict holds: object.__setattr__ and
            __delattr__ (harmless dunders) write a proxy's dict past the methods below, and
            IMPORT_FROM's fallback reads __name__ (bypass 160). A data descriptor on the class
            comes before the dict, for reads and for writes (no setter: AttributeError)."""
            return real_names.get(id(self), "codeq guard")

        def __setattr__(self, key, value):
            if type(key) is not str or key.startswith("__"):
                raise AttributeError(f"codeq guard: module attribute {key!r} is read-only")
            module_type.__setattr__(self, key, value)

        def __delattr__(self, key):
            if type(key) is not str or key.startswith("__"):
                raise AttributeError(f"codeq guard: module attribute {key!r} is read-only")
            module_type.__delattr__(self, key)

        def __getattr__(self, key):
            """A name the proxy lacks (its own lazy hook, if any, has refused it)."""
            absent_name(self, key)

    def absent_name(module, key):
        """Raises for a name a proxy lacks. A proxy carries its module's real name, and on an
        AttributeError CPython's IMPORT_FROM takes sys.modules[module.__name__ + "." + key]:
        `import numpy.core._methods as m` compiles to IMPORT_FROMs on the proxies (no
        fromlist, so no from_view) and got the real private module (bypass 155). For a name that
        is a loaded module's, ImportError, which IMPORT_FROM does not catch."""
        name = module.__name__
        if type(key) is str and f"{name}.{key}" in _sys.modules:
            raise ImportError(f"codeq guard: module {name + '.' + key!r} is not available to "
                              f"the job", name=f"{name}.{key}")
        raise AttributeError(f"module {name!r} has no attribute {key!r}")

    GuardedModule.__name__ = GuardedModule.__qualname__ = "module"

    class ForwardingModule(GuardedModule):
        """The proxy of a module the policy restricts to a few attributes (sys): reads and
        writes of those go to the real module, so `sys.stdout = buf` redirects print() and
        contextlib.redirect_stdout is seen by `sys.stdout.write`, as in a direct run. A name
        is exact str before it is compared: a str subclass's __eq__ and __hash__ could match
        an allowed name while the real getattr reads its own ("modules", rtA 06)."""

        def __getattr__(self, key):
            real, names = forwarded[id(self)]
            plain_name(key)
            if key in names:
                try:
                    return real_getattr(real, key)
                except AttributeError:
                    pass  # raised below instead: CPython's would carry the real module in .obj
            absent_name(self, key)

        def __setattr__(self, key, value):
            real, names = forwarded[id(self)]
            plain_name(key)
            if key in names:
                real_setattr(real, key, value)
            else:
                check_attr(key)  # the proxy's own attributes, as the job's setattr would
                GuardedModule.__setattr__(self, key, value)

    # Submodules of an allowed package that the job never gets: numpy.ctypeslib hands out
    # ctypes types, whose mro() leads to py_object and Union, i.e. any address made an object
    # with no audit event (bypass 123; 115 and 116 were the same through ndarray.ctypes);
    # numpy.compat is Python 2 shims over what the job may not have: npy_load_module runs a
    # library file as any module and returns the real module (128), pathlib's Path.
    # numpy.distutils and numpy.f2py are build tools: exec_mod_from_location runs a library
    # file as a new module and returns it (rtB 144); numpy.testing hands out the real
    # warnings module (clear_and_catch_warnings()._module, unittest's assertWarns, rtB 142).
    # logging.config resolves any dotted name with the real __import__ and getattr
    # (BaseConfigurator.resolve("sys.modules"), a red-team review of 2026-12-06), for a policy
    # that allows logging.
    # json.tool is json's command line: it holds pathlib's Path for its own use (foreign()).
    never = ("numpy.ctypeslib", "numpy.compat", "numpy.distutils", "numpy.f2py",
             "numpy.testing", "logging.config", "json.tool")

    def module_allowed(name):
        return name.partition(".")[0] in allowed and \
            not any(name == n or name.startswith(n + ".") for n in never)

    own_module = (type, _types.FunctionType, _types.BuiltinFunctionType, _types.MethodType)
    guard_module = globals().get("__name__")

    def foreign(value):
        """Whether value is a class or function (or an object of a class) of a Python module
        the job may not import. An allowed module's namespace also holds what it imported for
        its own use: json.tool's pathlib.Path, whose instances reach posixpath, os and sys,
        and from there the real builtins and the guard's own frame (a red-team review of
        2026-12-06); numpy.lib.npyio's os.PathLike; functools' reprlib.recursive_repr. A proxy
        hands out none of them, whatever its name. What C code defines (os's functions are
        posix's, hashlib's blake2b _blake2's, heapq's _heapq's) holds no Python globals to walk
        from and stays; so do builtins and the guard's own stand-ins."""
        try:
            m = value.__module__ if isinstance(value, own_module) else type(value).__module__
        except Exception:
            return False
        if type(m) is not str or m in ("builtins", guard_module) or module_allowed(m) or \
                module_allowed(m.lstrip("_")):
            return False
        mod = _sys.modules.get(m)
        where = vars(mod).get("__file__") if isinstance(mod, module_type) else None
        return mod is None or (type(where) is str and where.endswith(".py"))

    def denied_name(name):
        if not isinstance(name, str):
            return False
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            return name not in harmless
        return name in introspection

    def plain_name(name):
        """name, if it is exact str: a str subclass's startswith, __eq__ or __hash__ could judge
        it as one name while the real getattr reads another (CPython needs no other)."""
        if type(name) is not str:
            raise TypeError("codeq guard: attribute names must be plain str")
        return name

    def check_attr(name):
        if isinstance(name, str):
            plain_name(name)
        if denied_name(name):
            raise AttributeError(f"codeq guard: attribute {name!r} is not allowed by policy "
                                 f"{policy['name']}")

    drop = object()
    swaps = {}  # id(real object) -> what a proxy holds instead (drop: nothing)
    swaps_for = [-1]  # len(sys.modules) when swaps was last filled
    tester = [None]  # numpy's PytestTester class, once numpy._pytesttester is loaded

    def swapped(value):
        """What a proxy module exposes for `value`. The dangerous callables are judged by what
        they are, not by the name a module gives them: operator.attrgetter re-exported under
        another name, or a module holding io.open, gets the same treatment as the original."""
        if swaps_for[0] != len(_sys.modules):
            swaps_for[0] = len(_sys.modules)
            byname = {"builtins": {"getattr": guarded_getattr, "setattr": guarded_setattr,
                                   "delattr": guarded_delattr, "hasattr": guarded_hasattr,
                                   "__import__": guarded_import},
                      "operator": {"attrgetter": guarded_attrgetter,
                                   "methodcaller": guarded_methodcaller},
                      "io": {"open": drop, "open_code": drop, "FileIO": drop},
                      "typing": {"get_type_hints": drop, "ForwardRef": drop},
                      "string": {"Formatter": drop},
                      # add_newdoc(place, obj, doc) imports any module by name and reads its
                      # attributes with the real getattr: a missing one's AttributeError.obj is
                      # the real module (bypass 122).
                      "numpy.core.function_base": {"add_newdoc": drop},
                      # info(obj, toplevel=name) and lookfor(what, module=name) import any
                      # module by name (outside the policy: its import-time code runs) and walk
                      # its namespace; source() reads any object's file.
                      "numpy.lib.utils": {"info": drop, "lookfor": drop, "source": drop}}
            byname["builtins"].update((n, drop) for n in denied)  # input only if denied
            for modname, names in byname.items():
                mod = _sys.modules.get(modname)
                for key, to in names.items():
                    real = vars(mod).get(key) if mod is not None else None
                    if real is not None:
                        swaps[id(real)] = (real, to)  # the real object kept: its id stays its own
            # numpy's test runners (np.test, np.linalg.test, ...) import pytest and read the
            # module their module_name, which the job may set, names in sys.modules (any loaded
            # module: a missing attribute's AttributeError.obj), where pytest is installed.
            tester[0] = vars(_sys.modules.get("numpy._pytesttester") or _types).get(
                "PytestTester")
        if tester[0] is not None and type(value) is tester[0]:
            return drop
        hit = swaps.get(id(value)) or job_view.get(id(value))
        return hit[1] if hit is not None and hit[0] is value else value

    def proxy(mod):
        name = mod.__name__
        p = proxies.get(name)
        if p is not None:
            return p
        p = GuardedModule(name, mod.__doc__ if isinstance(mod.__doc__, str) else None)
        proxies[name] = p
        real_names[id(p)] = name
        only = restricted.get(name)
        deny = denied_attrs.get(name, ())
        subs = {}  # allowed submodules of an unrestricted module: proxied on first access
        for key, value in list(vars(mod).items()):
            if key.startswith("_") and key not in ("__all__", "__version__"):
                continue
            if (only is not None and key not in only) or key in deny:
                continue
            if isinstance(value, module_type):
                if not module_allowed(value.__name__):
                    continue
                if only is None:
                    # numpy holds dozens of submodules, each with hundreds of names: proxying
                    # them all up front cost ~15 ms per job that imports numpy.
                    subs[key] = value
                    continue
                value = proxy(value)
            elif only is not None:
                continue  # forwarded on access, never copied (see ForwardingModule)
            elif foreign(value):
                continue
            value = swapped(value)
            if value is drop:
                continue
            module_type.__setattr__(p, key, value)
        if only is not None:
            forwarded[id(p)] = (mod, only.difference(deny))
            module_type.__setattr__(p, "__class__", ForwardingModule)
        deferred[name] = subs
        for key, full in late.pop(name, {}).items():
            module_type.__setattr__(p, key, proxy(_sys.modules[full]))
        real_lazy = "__getattr__" in vars(mod)
        if subs or real_lazy:
            # Deferred submodules, and lazily computed attributes (numpy's): same filter, on
            # demand; a proxied submodule is kept on the proxy for the next access. Everything
            # it uses comes from this proxy() call's scope, never from parameters: the job can
            # call `module.__getattr__(...)` itself, and must not be able to pass its own
            # deny list or submodule table.
            def lazy(key):
                plain_name(key)
                if key in subs:
                    value = proxy(subs[key])
                    module_type.__setattr__(p, key, value)
                    return value
                if not real_lazy or key.startswith("_") or \
                        (only is not None and key not in only) or key in deny:
                    raise AttributeError(f"module {name!r} has no attribute {key!r}")
                # Raised after the except block, not in it: `from None` only hides the
                # original error, which stays the new one's __context__, and its .obj is the
                # real module (bypass 112).
                value = real_getattr(mod, key, drop)
                if value is drop:
                    raise AttributeError(f"module {name!r} has no attribute {key!r}")
                if isinstance(value, module_type):
                    if value.__name__ in never:
                        # Not an AttributeError: `from numpy import ctypeslib` would then
                        # take the real module from sys.modules (IMPORT_FROM's fallback).
                        raise ImportError(f"codeq guard: module {value.__name__!r} is not "
                                          f"allowed by policy {policy['name']}")
                    if not module_allowed(value.__name__):
                        raise AttributeError(f"module {name!r} has no attribute {key!r}")
                    value = proxy(value)
                elif foreign(value):
                    raise AttributeError(f"module {name!r} has no attribute {key!r}")
                value = swapped(value)
                if value is drop:
                    raise AttributeError(f"module {name!r} has no attribute {key!r}")
                return value
            module_type.__setattr__(p, "__getattr__", lazy)
        public = getattr(mod, "__all__", None)
        if isinstance(public, (list, tuple)):
            # Only what the proxy holds or defers: asking the real module's __getattr__ here
            # would import every lazily loaded submodule numpy lists in __all__.
            module_type.__setattr__(p, "__all__", [n for n in public if isinstance(n, str) and
                                                   (n in subs or n in vars(p))])
        return p

    def link(name, extra=()):
        # `import a.b.c` / `from a.b import c`: the parents' proxies get the loaded submodules.
        # Only proxies already built are touched: one built later gets the link when it is
        # (late), and a submodule its proxy defers is proxied on first access anyway. Eagerly,
        # numpy's first `.sum()` in a job (its C code imports numpy.core._methods through the
        # job's __import__) proxied all of numpy.core: ~1.7 ms and ~330 page faults a job.
        parts = name.split(".")
        names = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        names += [f"{name}.{x}" for x in extra if type(x) is str and f"{name}.{x}" in _sys.modules]
        for full in names:
            parent, _, leaf = full.rpartition(".")
            if not module_allowed(full) or private_part(full):
                # `from numpy import ctypeslib`: the job's fromlist names it. A private
                # submodule is its package's inside, never a proxy's attribute: linked from a
                # fromlist (`__import__("numpy", fromlist=["__config__"])`, refused only
                # afterwards by from_view), `import numpy.__config__ as c` found it on the
                # numpy proxy (bypass 164; 145 was the import itself).
                continue
            if parent and parent in _sys.modules and full in _sys.modules:
                only = restricted.get(parent)
                if only is not None and leaf not in only:
                    continue
                key = _sys.modules[parent].__name__  # proxies go by it (os.path is posixpath)
                p = proxies.get(key)
                if p is None:
                    late.setdefault(key, {})[leaf] = full
                elif leaf in vars(p) or deferred.get(key, {}).get(leaf) is not _sys.modules[full]:
                    module_type.__setattr__(p, leaf, proxy(_sys.modules[full]))

    def import_for_job(name, fromlist):
        """real_import, with its failure given to the job as a new error. What importlib raises
        carries its own objects: `import random.x` reads the real random's __path__, and
        `raise ModuleNotFoundError(...) from None` keeps that AttributeError as __context__,
        its .obj the real module (bypass 161); a module's own code failing leaves its frames
        in __traceback__. Raised here, after the except block, the new error has neither."""
        try:
            return real_import(name, None, None, fromlist, 0)
        except ImportError as e:
            kind = ModuleNotFoundError if isinstance(e, ModuleNotFoundError) else ImportError
            message, failed = str(e), e.name if type(e.name) is str else None
        except Exception as e:
            kind, failed = ImportError, name
            message = f"codeq guard: import of {name!r} failed: {type(e).__name__}: {e}"
        raise kind(message, name=failed)

    def private_part(name):
        return any(part.startswith("_") for part in name.split(".")[1:])

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if isinstance(name, str) and type(name) is not str:
            raise TypeError("codeq guard: module names must be plain str")
        if level:
            raise ImportError("codeq guard: relative imports are not allowed (a job is the "
                              "single file main.py)")
        if isinstance(name, str) and (name.startswith("_") and not module_allowed(name) or
                                      module_allowed(name) and private_part(name)):
            # C code of allowed modules imports its private helpers through the caller's
            # builtins, i.e. ours (datetime.strptime -> `import _strptime` from the job's frame,
            # numpy's sum() -> numpy.core._methods). CPython's C import takes the module from
            # sys.modules, not from our return value, so the helper is loaded for real and the
            # job gets an empty stand-in, named as no module is (IMPORT_FROM's fallback). A
            # private submodule is its package's inside, not its API: numpy.__config__'s
            # get_info(name) returns its globals, os and sys (rtB 145).
            import_for_job(name, ())
            harden()  # _strptime, say, imports re and so enum
            if not fromlist and "." in name:
                return proxy(_sys.modules[name.partition(".")[0]])  # `import a._b` binds a
            return module_type(f"{name} (codeq guard)", "codeq guard: not available to the job")
        if not isinstance(name, str) or not module_allowed(name):
            raise ModuleNotFoundError(f"codeq guard: import of module {name!r} is not allowed "
                                      f"by policy {policy['name']}", name=str(name))
        import_for_job(name, fromlist)
        harden()
        parts = name.split(".")
        if any(".".join(parts[:i]) not in _sys.modules for i in range(1, len(parts))):
            # A package whose import failed halfway leaves children loaded without it
            # (numpy.distutils.misc_util, rtB 144): none is served without its parent.
            raise ImportError(f"codeq guard: {name!r} is loaded without its package")
        link(name, fromlist or ())
        if fromlist:
            return from_view(proxy(_sys.modules[name]), fromlist)
        return proxy(_sys.modules[name.partition(".")[0]])

    def from_view(src, fromlist):
        """`from M import a, b`: a module made for this one statement, holding what the proxy
        gives for a and b. Its name is no prefix of a sys.modules key, so IMPORT_FROM's
        fallback to sys.modules[M.__name__ + "." + name] finds nothing (rtA 02, 08)."""
        if "*" in fromlist:
            return src  # import * reads __all__ or the public names, with no fallback
        view = module_type(f"{src.__name__} (codeq guard)")
        for key in fromlist:
            if type(key) is not str:
                raise TypeError("codeq guard: module names must be plain str")
            check_attr(key)
            value = real_getattr(src, key, drop)
            if value is not drop:
                module_type.__setattr__(view, key, value)
        return view

    def guarded_getattr(obj, name, *default):
        check_attr(name)
        return real_getattr(obj, name, *default)

    def guarded_setattr(obj, name, value):
        check_attr(name)
        return real_setattr(obj, name, value)

    def guarded_delattr(obj, name):
        check_attr(name)
        return real_delattr(obj, name)

    def guarded_hasattr(obj, name):
        check_attr(name)
        return real_hasattr(obj, name)

    import _string
    parse_format, split_field = _string.formatter_parser, _string.formatter_field_name_split
    real_format, real_format_map = str.format, str.format_map
    formats_passed = set()  # templates (exact str) whose every field passed the getattr rules

    def format_fields(template, depth=2):
        """The attribute names a str.format template reads, its fields' specs included, as
        deep as CPython's formatter goes (it refuses a third level before reading anything)."""
        if depth <= 0:
            return
        for _text, field, spec, _conversion in parse_format(template):
            if field is not None:
                for is_attr, key in split_field(field)[1]:
                    if is_attr:
                        yield key
            if spec and "{" in spec:
                yield from format_fields(spec, depth - 1)

    def check_format(template):
        """str.format reads the attributes its fields name (`{0.__init__.__globals__}`): by
        names in a string, which may be built at run time, in C and with no audit event
        (bypasses 23, 24, 81, 82). Each must pass the getattr rules, unless the template is a
        constant of the library code calling (`'{0.__class__.__name__}({0._mapping!r})'` in
        _collections_abc's MappingView.__repr__): what a library reads with its own template
        is the library's."""
        if type(template) is str:
            if template in formats_passed:
                return
            text = template
        elif isinstance(template, str):
            text = str.__getitem__(template, slice(None))  # a subclass's real characters
        else:
            return  # the real method raises its own TypeError
        passed = True
        try:
            for name in format_fields(text):
                if denied_name(name):
                    if not library_constant(template, _sys._getframe(2)):
                        check_attr(name)
                    passed = False  # the library's, for that caller only: not remembered
        except ValueError:
            # Malformed past the fields checked so far: the real method reads only those
            # before it meets the same error, raised at its own point, with its own message.
            return
        if passed and len(formats_passed) < 4096:
            formats_passed.add(text)

    def library_constant(template, frame):
        code = frame.f_code
        return library_file(code.co_filename) and any(c is template for c in code.co_consts)

    def guarded_format(*args, **kwargs):  # CPython's own errors for missing arguments
        if args:
            check_format(args[0])
        return real_format(*args, **kwargs)

    def guarded_format_map(*args):
        if args:
            check_format(args[0])
        return real_format_map(*args)

    for guarded, real in ((guarded_format, real_format), (guarded_format_map, real_format_map)):
        guarded.__name__, guarded.__qualname__ = real.__name__, real.__qualname__
        guarded.__doc__, guarded.__module__ = real.__doc__, "builtins"  # pickled by reference

    def plain_path(file):
        """The path as an exact str or bytes, asked of the job's object once: a path object's
        __fspath__ (or a str subclass's methods) could answer the check one way and open()
        another, so the check and the open both use this one value."""
        if isinstance(file, _os.PathLike) and not isinstance(file, (str, bytes)):
            file = _os.fspath(file)
        if isinstance(file, str):
            return str.__str__(file)  # an exact copy of a subclass's characters
        if type(file) is bytes:
            return file
        raise PermissionError("codeq guard: open() takes a path inside the working directory")

    def workdir_open(file, mode="r", *args, **kwargs):
        file = plain_path(file)
        root = _os.path.realpath(_os.getcwd())
        path = _os.path.realpath(file)
        if isinstance(path, bytes):
            path = _os.fsdecode(path)
        if path != root and not path.startswith(root + _os.sep):
            raise PermissionError(f"codeq guard: {file!r} is outside the job's working directory")
        return _io.open(file, mode, *args, **kwargs)

    def guarded_attrgetter(attr, *attrs):
        # operator.attrgetter/methodcaller read attributes named by strings, like getattr: the
        # same names are refused, when the getter is made (whatever name or alias it has).
        # Closures, not the real classes: type() of what the job receives must not be a way
        # back to the unchecked constructor.
        paths = []
        for name in (attr, *attrs):
            if type(name) is not str:
                raise TypeError("attribute name must be a string")
            parts = name.split(".")
            for part in parts:
                check_attr(part)
            paths.append(parts)

        def get_one(obj, parts):
            for part in parts:
                obj = real_getattr(obj, part)
            return obj

        if len(paths) == 1:
            return lambda obj: get_one(obj, paths[0])
        return lambda obj: tuple(get_one(obj, parts) for parts in paths)

    def guarded_methodcaller(name, /, *args, **kwargs):
        if type(name) is not str:
            raise TypeError("method name must be a string")
        check_attr(name)
        return lambda obj: real_getattr(obj, name)(*args, **kwargs)

    denied = {"exec", "eval", "compile", "breakpoint", "help", "globals", "locals", "vars",
              "license", "credits", "copyright", "open"}
    if not policy["input"]:
        denied.add("input")
    job_builtins = {}
    for key, value in vars(_builtins).items():
        if key in denied:
            continue
        if key.startswith("__") and key not in ("__build_class__", "__name__", "__debug__"):
            continue
        job_builtins[key] = value
    job_builtins.update(__import__=guarded_import, getattr=guarded_getattr,
                        setattr=guarded_setattr, delattr=guarded_delattr,
                        hasattr=guarded_hasattr)
    if policy["files"] == "workdir":
        job_builtins["open"] = workdir_open

    # Allowed modules whose public API reads, writes or lists attributes and module globals by
    # names the program passes at run time, where neither the static rules (the names are data)
    # nor the proxies (the objects are real classes and functions) can see them. Each is
    # patched in the real module when it is loaded, so the library's own internal calls go
    # through the same check; every patch only refuses what getattr() would refuse:
    # - functools.update_wrapper(w, f, assigned, updated) reads getattr(f, name) for each name
    #   and sets it on w (a job object's __setattr__ receives it): f.__func__.__globals__.
    # - dataclasses reads getattr(cls, name) for every annotation (a field "__getattribute__"
    #   of a class made with make_dataclass(init=False) has object.__getattribute__ as its
    #   default), and fields()/asdict()/astuple()/replace() read getattr(obj, f.name) for the
    #   entries of __dataclass_fields__, a plain class attribute any class can define.
    # - enum.Enum._convert_(name, module, filter) makes members of any loaded module's globals
    #   (random's _os) and writes members into it; enum.global_enum(cls) writes members into
    #   the globals of cls.__module__, which the class sets: "builtins" replaces the real
    #   builtins every library and this guard use, "posixpath" the realpath of open()'s check.
    job = {"builtins": job_builtins}
    hardened = set()
    job_view = {}  # id(patched function) -> (patched, what a proxy gives the job instead)

    def called_from_library_import():
        """The caller's caller is module code of the standard library being imported (re's
        `@enum.global_enum class RegexFlag`), not anything main.py runs."""
        code = _sys._getframe(2).f_code
        return code.co_name == "<module>" and library_file(code.co_filename)

    def checked_names(names, defaults):
        """An iterable of attribute names, materialized once, each an exact str that is a
        library default or passes the getattr rules."""
        names = tuple(names)
        for name in names:
            plain_name(name)
            if name not in defaults:
                check_attr(name)
        return names

    module_keys = ("__spec__", "__loader__")

    def plain_namespace(d):
        """A plain dict that is no module's namespace (a class's is a mappingproxy). Every
        module's dict gets __spec__ and __loader__ when it is made (module_init_dict), and no
        job deletes them (a proxy's dunders are read-only): two lookups, where a walk of
        sys.modules cost ~20 us on every functools.wraps, and missed a module no longer in
        it."""
        return type(d) is dict and not any(dict.__contains__(d, k) for k in module_keys)

    def harden_functools(functools):
        real_update = functools.update_wrapper
        defaults = frozenset(functools.WRAPPER_ASSIGNMENTS + functools.WRAPPER_UPDATES)
        missing = object()

        def update_wrapper(wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,
                           updated=functools.WRAPPER_UPDATES):
            # The library's steps, with wrapped.__dict__ read once and judged by what it is,
            # whichever list names it: updated=("__dict__",) copies it into the wrapper's,
            # assigned=("__dict__",) hands it to the wrapper's __setattr__ (a job method). A
            # function's attributes pass; a class's __dict__ holds its raw descriptors
            # (type(f).__dict__["__globals__"]), like vars(), which the static rules refuse. Not
            # judged by the type of wrapped: an alias (types.GenericAlias, a bound method made
            # of `type`) forwards the read to its origin, a class or a module (bypasses 136-138).
            assigned, updated = checked_names(assigned, defaults), checked_names(updated, defaults)
            attrs = missing
            if "__dict__" in assigned or "__dict__" in updated:
                attrs = getattr(wrapped, "__dict__", missing)
                if attrs is not missing and not plain_namespace(attrs):
                    raise PermissionError("codeq guard: copying a class's or a module's "
                                          f"__dict__ is not allowed by policy {policy['name']}")
            for name in assigned:
                value = attrs if name == "__dict__" else getattr(wrapped, name, missing)
                if value is not missing:
                    setattr(wrapper, name, value)
            for name in updated:
                value = attrs if name == "__dict__" else getattr(wrapped, name, missing)
                getattr(wrapper, name).update({} if value is missing else value)
            wrapper.__wrapped__ = wrapped
            return wrapper

        update_wrapper.__doc__ = real_update.__doc__
        functools.update_wrapper = update_wrapper  # wraps() finds it as a global

        # cached_property returns instance.__dict__.get(self.attrname), a name anyone may set:
        # where that __dict__ is a class's (a class itself, or super(M, C) for a class whose
        # metaclass is not type) or a module's, a raw class-dict entry or global by any name
        # (bypass 113: type(f).__dict__["__globals__"]). The library's __get__ reads attrname
        # again after running the cached function (job code, which may rename it), so this is
        # the same method reading the name and the mapping once: a checked name, a plain dict
        # that is no module's namespace.
        cached = functools.cached_property

        def cached_get(self, instance, owner=None):
            if instance is None:
                return self
            name = self.attrname
            if name is None:
                raise TypeError("Cannot use cached_property instance without calling "
                                "__set_name__ on it.")
            check_attr(name)
            try:
                cache = instance.__dict__
            except AttributeError:
                raise TypeError(f"No '__dict__' attribute on {type(instance).__name__!r} "
                                f"instance to cache {name!r} property.") from None
            if isinstance(instance, (type, module_type)) or not plain_namespace(cache):
                raise PermissionError("codeq guard: functools.cached_property on a class or a "
                                      f"module is not allowed by policy {policy['name']}")
            val = cache.get(name, missing)
            if val is missing:
                with self.lock:
                    val = cache.get(name, missing)
                    if val is missing:
                        val = self.func(instance)
                        cache[name] = val
            return val

        cached_get.__doc__ = cached.__get__.__doc__
        cached.__get__ = cached_get

    def harden_numpy(numpy):
        # ndarray.ctypes hands out the ctypes module numpy.core._internal imported, as its
        # helper's _ctypes (bypass 115); a Union over it reads and writes any address without
        # an audit event. Without that module numpy uses its own stand-in, as on a Python built
        # without ctypes (.ctypes.data still gives the address; data_as() is what goes).
        internal = _sys.modules.get("numpy.core._internal")
        if internal is not None and vars(internal).get("ctypes") is not None:
            internal.ctypes = None
            # numpy.ctypeslib's import already asked for the intp type: its cache holds the
            # real ctypes.c_long, which ndarray.ctypes.shape hands out (its mro() leads to
            # py_object, bypass 127). Emptied, numpy builds its stand-in's type instead.
            getintp = vars(internal).get("_getintp_ctype")
            if hasattr(getintp, "cache"):
                getintp.cache = None
        # numpy.random's BitGenerator.ctypes imports ctypes when asked and hands out its types
        # (rtB 143), and its .cffi imports cffi, whose FFI reads and writes any address
        # without an audit event: no library import of either succeeds in the job.
        for name in ("ctypes", "cffi", "_cffi_backend"):
            if not module_allowed(name):
                _sys.modules[name] = None

        # numpy.ma's function classes (type(np.ma.all), type(np.ma.arange), ...) take a name
        # and look it up on the real numpy module: a private name gave its _builtins (rtB 139),
        # a missing one an AttributeError whose .obj is the real module (rtB 141). A name is
        # read once, checked, and the library's code runs on a copy of the instance that
        # holds it (a subclass could make __name__ a property answering twice).
        core, extras = _sys.modules.get("numpy.ma.core"), _sys.modules.get("numpy.ma.extras")
        if core is None or extras is None:
            return

        def public_function(name, *owners):
            if type(name) is not str or name.startswith("_"):
                raise TypeError(f"codeq guard: {name!r} is not a public numpy function")
            check_attr(name)
            for owner in owners:
                value = real_getattr(owner, name, drop)
                if value is not drop and not isinstance(value, module_type):
                    return name
            raise AttributeError(f"codeq guard: numpy has no function {name!r}")

        def named_call(cls, real_call, owners):
            def __call__(self, *args, **params):
                name = public_function(self.__name__, *owners)
                fresh = object.__new__(cls)
                for key, value in list(vars(self).items()):
                    object.__setattr__(fresh, key, value)
                object.__setattr__(fresh, "__name__", name)
                return real_call(fresh, *args, **params)
            return __call__

        named = [(core._frommethod, (numpy, core.MaskedArray))]
        named += [(cls, (numpy,)) for cls in vars(extras).values()
                  if isinstance(cls, type) and issubclass(cls, extras._fromnxfunction)]
        for cls, owners in named:
            if "__call__" in vars(cls):
                type.__setattr__(cls, "__call__", named_call(cls, vars(cls)["__call__"], owners))
        convert, real_init = core._convert2ma, core._convert2ma.__init__

        def convert_init(self, funcname, *args, **kwargs):
            real_init(self, public_function(funcname, numpy), *args, **kwargs)

        type.__setattr__(convert, "__init__", convert_init)

        # MaskedArray._update_from(obj) copies obj.__dict__ into plain dicts the job reads
        # (m._optinfo, m._basedict). Given a class, that is its raw namespace: the slot wrapper
        # object.__getattribute__ as a value reads any attribute by a name built at run time
        # (bypass 162, the class of 107, 111 and 136 in another library). Judged by what
        # __dict__ gives, read once, not by the type of obj: an alias forwards the read to its
        # origin (type(list[int])(object, int), a bound method made of a class: bypass 163).
        # The library's steps, with every attribute of obj read once; an instance's
        # attributes are copied as before, no class's or module's namespace is.
        ma_type, ndarray = core.MaskedArray, numpy.ndarray

        def _update_from(self, obj):
            baseclass = type(obj) if isinstance(obj, ndarray) else ndarray
            optinfo = {}
            optinfo.update(real_getattr(obj, "_optinfo", {}))
            optinfo.update(real_getattr(obj, "_basedict", {}))
            if not isinstance(obj, ma_type):
                attrs = real_getattr(obj, "__dict__", {})
                if isinstance(obj, (type, module_type)) or not plain_namespace(attrs):
                    raise PermissionError("codeq guard: numpy.ma does not copy the namespace "
                                          f"of a class or module under policy {policy['name']}")
                optinfo.update(attrs)
            fields = dict(_fill_value=real_getattr(obj, "_fill_value", None),
                          _hardmask=real_getattr(obj, "_hardmask", False),
                          _sharedmask=real_getattr(obj, "_sharedmask", False),
                          _isfield=real_getattr(obj, "_isfield", False),
                          _baseclass=real_getattr(obj, "_baseclass", baseclass),
                          _optinfo=optinfo, _basedict=optinfo)
            self.__dict__.update(fields)
            self.__dict__.update(optinfo)

        _update_from.__doc__ = vars(ma_type)["_update_from"].__doc__
        type.__setattr__(core.MaskedArray, "_update_from", _update_from)

    def harden_dataclasses(dc):
        field_type = dc.Field
        slots = {n: vars(field_type)[n] for n in field_type.__slots__}  # the original slots
        kinds = (dc._FIELD, dc._FIELD_CLASSVAR, dc._FIELD_INITVAR)
        real_get_field, real_fields, missing = dc._get_field, dc.fields, dc.MISSING

        class Checked(field_type):
            """A private copy of a Field whose name was checked: the library's own code reads
            names from these, never from objects the job holds (it could rename those)."""
            __slots__ = ()
            name = property(lambda self: slots["name"].__get__(self))

        def snapshot(table):
            """Checked copies of the entries of a __dataclass_fields__ (read once by the
            caller: it may be a property answering differently each time)."""
            if type(table) is not dict:
                raise TypeError("codeq guard: __dataclass_fields__ must be a dict")
            copies = []
            for f in dict.values(table):
                if not isinstance(f, field_type):
                    raise TypeError("codeq guard: __dataclass_fields__ holds a non-Field")
                copy = object.__new__(Checked)
                for slot, member in slots.items():
                    member.__set__(copy, member.__get__(f))
                checked_names((slots["name"].__get__(copy),), ())
                copies.append(copy)
            return copies

        def kind(f):
            return slots["_field_type"].__get__(f)

        def fields(class_or_instance):
            table = real_getattr(class_or_instance, "__dataclass_fields__", None)
            if table is None:
                raise TypeError("must be called with a dataclass type or instance")
            return tuple(f for f in snapshot(table) if kind(f) is kinds[0])

        def get_field(cls, a_name, a_type, default_kw_only):
            checked_names((a_name,), ())
            return real_get_field(cls, a_name, a_type, default_kw_only)

        def replace(obj, /, **changes):
            # dataclasses.replace, reading the fields once through snapshot().
            if not dc.is_dataclass(obj) or isinstance(obj, type):
                raise TypeError("replace() should be called on dataclass instances")
            for f in snapshot(real_getattr(obj, "__dataclass_fields__")):
                name = f.name
                if kind(f) is kinds[1]:
                    continue
                if not slots["init"].__get__(f):
                    if name in changes:
                        raise ValueError(f"field {name} is declared with init=False, it "
                                         "cannot be specified with replace()")
                    continue
                if name not in changes:
                    if kind(f) is kinds[2] and slots["default"].__get__(f) is missing:
                        raise ValueError(f"InitVar {name!r} must be specified with replace()")
                    changes[name] = real_getattr(obj, name)
            return obj.__class__(**changes)

        for fn, real in ((fields, real_fields), (replace, dc.replace)):
            fn.__doc__ = real.__doc__
        dc._get_field, dc.fields, dc.replace = get_field, fields, replace
        job_view[id(fields)] = (fields, real_fields)  # the job's own Field objects: harmless

    def harden_enum(enum):
        real_global, real_convert = enum.global_enum, enum.EnumType._convert_
        flag, repr_enum = enum.Flag, enum.ReprEnum
        global_reprs = (enum.global_flag_repr, enum.global_enum_repr, enum.global_str)

        def global_enum(cls, update_str=False):
            if called_from_library_import():
                return real_global(cls, update_str)
            # The members go to the job's own globals, whatever module the class names.
            members = dict(cls.__members__)
            cls.__repr__ = global_reprs[0] if issubclass(cls, flag) else global_reprs[1]
            if not issubclass(cls, repr_enum) or update_str:
                cls.__str__ = global_reprs[2]
            job["main"].__dict__.update(members)
            return cls

        def _convert_(cls, *args, **kwargs):
            if called_from_library_import():
                return real_convert(cls, *args, **kwargs)
            raise PermissionError(f"codeq guard: enum's _convert_ is not allowed by policy "
                                  f"{policy['name']} (it reads and writes other modules' "
                                  "globals)")

        global_enum.__doc__ = real_global.__doc__
        enum.global_enum = global_enum
        type.__setattr__(enum.EnumType, "_convert_", _convert_)

    def harden_copy(copy):
        # copy and deepcopy call whatever a __reduce_ex__ returns, with the real builtins:
        # Enum's is (getattr, (self.__class__, self._name_)), and both are the job's to set
        # (bypass 131: a class property and _name_ = '__glo' + 'bals__' gave a module's
        # globals). A reducer may call only what the job itself could: a builtin the job's
        # builtins hold as it is, or getattr by a name the getattr rules allow.
        # Judged when the reducer is called, on the arguments it gets: deepcopy copies them
        # first, and a memo the job's __deepcopy__ writes can swap a checked name for another
        # (rtA 07). No argument may be a real module or a module's namespace: typing's aliases
        # reduce to getitem(globals()[self._name], ...), and _name is the job's to set (the
        # real builtins dict, rtB 146).
        real_reconstruct = copy._reconstruct
        builtin_function = type(len)

        def no_namespace(values):
            for arg in values:
                if (isinstance(arg, module_type) and not isinstance(arg, GuardedModule)) or \
                        (type(arg) is dict and not plain_namespace(arg)):
                    raise PermissionError("codeq guard: a module or its namespace in a reduce "
                                          f"value is not allowed by policy {policy['name']}")

        def _reconstruct(x, memo, func, args, *rest, **kwargs):
            if type(func) is builtin_function and func is not real_getattr:
                name = func.__name__
                if vars(_builtins).get(name) is func and job_builtins.get(name) is not func:
                    raise PermissionError(f"codeq guard: {name} in a reduce value is not "
                                          f"allowed by policy {policy['name']}")
            if type(args) is tuple:
                # Before deepcopy copies them too: a copy of a module's namespace is a plain
                # dict holding the same functions and modules (bypass 158).
                no_namespace(args)

            def checked_call(*given):
                no_namespace(given)
                if func is real_getattr:
                    if len(given) != 2:
                        raise TypeError("codeq guard: getattr in a reduce value takes two "
                                        "arguments")
                    check_attr(given[1])
                return func(*given)

            return real_reconstruct(x, memo, checked_call, args, *rest, **kwargs)

        copy._reconstruct = _reconstruct

    def harden_typing(typing):
        # - An alias's __getattr__ relays a name to the real getattr on its origin unless the
        #   name calls itself a dunder, by its own startswith/endswith: a str subclass said no
        #   for "__globals__" (rtA 01; gi_frame was bypass 135). __setattr__ writes the origin
        #   the same way. Names are exact str and pass the getattr rules.
        # - ForwardRef._evaluate evals in the dicts it is given; eval puts the caller's
        #   builtins, typing's real ones, into a globals dict that has none, the job's own dict
        #   included, before any audit event (rtA 03): the job's builtins go there first.
        # - get_type_hints (dropped from the proxy, still called by singledispatch.register)
        #   follows __wrapped__ to the globals of any function (heapq's) and hands them to
        #   each annotation's _evaluate, which the job can provide or rebind on ForwardRef
        #   (rtA 04, 05): it evaluates in main.py's globals, given, so nothing is followed.
        alias = typing._BaseGenericAlias
        real_alias_get, real_alias_set = alias.__getattr__, alias.__setattr__
        forward = typing.ForwardRef
        real_evaluate, real_hints = forward._evaluate, typing.get_type_hints

        def alias_getattr(self, attr):
            plain_name(attr)
            check_attr(attr)
            return real_alias_get(self, attr)

        def alias_setattr(self, attr, val):
            plain_name(attr)
            if not (attr.startswith("__") and attr.endswith("__")):
                check_attr(attr)  # the library sets its own dunders on the alias itself
            real_alias_set(self, attr, val)

        def evaluate(self, globalns, localns, *rest, **kwargs):
            if globalns is None and localns is None:
                globalns = localns = {}
            elif globalns is None:
                globalns = localns
            elif localns is None:
                localns = globalns
            if type(globalns) is not dict or not plain_namespace(globalns) and \
                    globalns is not vars(job["main"]):
                raise PermissionError("codeq guard: evaluating annotations in a module's "
                                      f"namespace is not allowed by policy {policy['name']}")
            globalns.setdefault("__builtins__", job_builtins)
            return real_evaluate(self, globalns, localns, *rest, **kwargs)

        def get_type_hints(obj, globalns=None, localns=None, include_extras=False):
            if globalns is None:
                globalns = vars(job["main"])  # so the library follows no __wrapped__ to one
            return real_hints(obj, globalns, localns, include_extras)

        public = frozenset(typing.__all__)

        def alias_reduce(self):
            # The library's: getitem(globals()[self._name], args). _name is the job's to set
            # (object.__setattr__ too), so it named typing's real builtins dict, which a deep
            # copy turned into a plain dict holding the real __import__ (bypass 158), or
            # typing's __loader__ (159). Read once: None or a name typing exports.
            name = self._name
            if name is not None and (type(name) is not str or name not in public):
                shown = repr(name) if type(name) is str else type(name).__name__
                raise PermissionError(f"codeq guard: a typing alias named {shown} is not "
                                      f"allowed by policy {policy['name']}")
            args = tuple(self.__args__)
            if len(args) == 1 and not isinstance(args[0], tuple):
                args, = args
            origin = vars(typing)[name] if name else self.__origin__
            return vars(typing)["operator"].getitem, (origin, args)

        for cls, name, value in ((alias, "__getattr__", alias_getattr),
                                 (alias, "__setattr__", alias_setattr),
                                 (typing._GenericAlias, "__reduce__", alias_reduce),
                                 (forward, "_evaluate", evaluate)):
            value.__doc__ = getattr(getattr(cls, name), "__doc__", None)
            type.__setattr__(cls, name, value)
        get_type_hints.__doc__ = real_hints.__doc__
        typing.get_type_hints = get_type_hints

    def harden_contextlib(contextlib):
        # redirect_stdout/redirect_stderr read and set the real sys by the name in
        # self._stream, a plain attribute the job can set: "modules" gave the real sys.modules
        # (bypass 132), and any sys attribute could be replaced on the way out.
        base = contextlib._RedirectStream

        def stream(self):
            name = self._stream  # read once: a property could answer the check and the use apart
            if type(name) is not str or name not in ("stdout", "stderr"):
                raise PermissionError(f"codeq guard: redirecting sys.{name} is not allowed by "
                                      f"policy {policy['name']}")
            return name

        def __enter__(self):  # the library's, with the name checked
            name = stream(self)
            self._old_targets.append(real_getattr(_sys, name))
            real_setattr(_sys, name, self._new_target)
            return self._new_target

        def __exit__(self, exctype, excinst, exctb):
            real_setattr(_sys, stream(self), self._old_targets.pop())

        type.__setattr__(base, "__enter__", __enter__)
        type.__setattr__(base, "__exit__", __exit__)

    def harden_import_shim(bootstrap):
        # importlib's deprecated load_module() takes any object as the loader and, for a name
        # already loaded, calls its exec_module() with the real module and returns it
        # (_LoaderBasics.load_module(Catch(), "os"), bypass 159). Nothing a job may import uses
        # it: the import system calls exec_module. Refused whoever calls it.
        def refused(*args, **kwargs):
            raise ImportError("codeq guard: load_module() is not allowed by policy "
                              f"{policy['name']}")
        bootstrap._load_module_shim = refused  # _LoaderBasics', FrozenImporter's, _abc's
        type.__setattr__(bootstrap.BuiltinImporter, "load_module", classmethod(refused))

    hardeners = {"_frozen_importlib": harden_import_shim, "functools": harden_functools,
                 "dataclasses": harden_dataclasses, "enum": harden_enum, "numpy": harden_numpy,
                 "copy": harden_copy, "contextlib": harden_contextlib, "typing": harden_typing}

    seal_module = _codeq_seal_module()
    seal, guard_str_format = _codeq_class_sealer(seal_module)
    sealed_at = [0]  # len(sys.modules) at the last seal

    def harden():
        """Patches each module of `hardeners` once it is loaded (cheap: a few lookups), then,
        if a module was loaded since the last call, seals every class made so far. Called only
        between imports (preparation, start, after each of the job's imports): a module still
        being imported may yet write to its own classes."""
        for name, patch in hardeners.items():
            if name not in hardened and name in _sys.modules:
                hardened.add(name)
                patch(_sys.modules[name])
        if len(_sys.modules) != sealed_at[0]:
            seal()
            sealed_at[0] = len(_sys.modules)

    class PatchingLoader:
        """The loader of a module a hardener patches, imported during the job by library code
        rather than by the job (functools' singledispatch.register imports typing lazily): the
        real loader runs it, then it is patched and its own classes sealed at once. Left to
        the job's next import, typing loaded so was neither: ForwardRef._evaluate was the job's
        to rebind, and the unpatched get_type_hints followed __wrapped__ to functools' real
        globals (bypass 165, exec isolation, where only the modules main.py names are
        preloaded). Only the classes of modules this load completed: another import may be in
        progress."""

        def __init__(self, real, name):
            self.real, self.name = real, name

        def __getattr__(self, key):  # get_source, is_package, ...: the real loader's
            return getattr(self.real, key)

        def create_module(self, spec):
            create = getattr(self.real, "create_module", None)
            return create(spec) if create is not None else None

        def exec_module(self, module):
            before = frozenset(_sys.modules)
            self.real.exec_module(module)
            if self.name not in hardened:
                hardened.add(self.name)
                hardeners[self.name](module)
            # It, and the modules its code imported (complete: their imports have returned).
            seal(frozenset(n for n in list(_sys.modules) if type(n) is str and n not in before)
                 | {self.name})

    def patched_spec(name, path, target):
        """The spec the other finders give for a module of `hardeners`, loaded through
        PatchingLoader."""
        for finder in _sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is JobImportFinder or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = PatchingLoader(spec.loader, name)
                return spec
        return None

    guard_globals = globals()
    c_helpers = frozenset({"_strptime"})

    def machinery(frame):
        code = frame.f_code
        return frame.f_globals is guard_globals or \
            code.co_filename.startswith("<frozen importlib._bootstrap") or \
            (code.co_name == "import_module" and frame.f_globals.get("__name__") == "importlib")

    def names_in(code):
        """The names code spells: its import statements' modules and the names they import
        (co_names), and its string constants, also inside tuples of them."""
        for n in code.co_names:
            yield n
        for c in code.co_consts:
            if type(c) is str:
                yield c
            elif type(c) in (tuple, frozenset):
                yield from (x for x in c if type(x) is str)

    def static_import(frame, name):
        """Whether the code running in frame names module `name` itself (`import a.b`,
        `from a import b`, `from . import b`, __import__("a.b")), rather than importing a name
        it was given: a name made at run time may be the job's."""
        code, package = frame.f_code, frame.f_globals.get("__package__")
        names = set(names_in(code))
        for t in names:
            if t == name or t.startswith(name + "."):
                return True
            if t and name.startswith(t + ".") and name[len(t) + 1:].partition(".")[0] in names:
                return True
        if type(package) is str and package and name.startswith(package + "."):
            return name[len(package) + 1:].partition(".")[0] in names
        return False

    class JobImportFinder:
        """Refuses new modules outside the allowlist when main.py imports them, or library code
        by a name it did not spell itself; loads the modules the guard patches through
        PatchingLoader."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if name in hardeners and name not in hardened:
                return patched_spec(name, path, target)
            if module_allowed(name):
                return None
            # The import machinery's frames and the guard's own are passed over: C code has no
            # frame, and an import it makes for the job's getattr(obj, name) (Cython's
            # BitGenerator.cffi) comes through the guard's getattr; main.py is then the
            # importer. importlib.import_module only forwards its caller's name. The guard's
            # own imports are its own.
            frame = _sys._getframe(1)
            for _ in range(64):
                if frame is not None and frame.f_globals is guard_globals and \
                        static_import(frame, name):
                    return None
                if frame is None or not machinery(frame):
                    break
                frame = frame.f_back
            if frame is None:
                return None
            if frame.f_code.co_filename == _JOB_FILE:
                if name.startswith("_"):
                    return None  # C's helper for the job's call (_strptime); see guarded_import
                raise ModuleNotFoundError(f"codeq guard: import of module {name!r} is not "
                                          f"allowed by policy {policy['name']}", name=name)
            # Library code imports what its own text names. A name it was handed is the job's
            # to choose: pickle imports a function's __module__ (any module, private ones too,
            # its import-time code run: unittest.__main__ gave a real TestLoader), numpy.info
            # its toplevel. The codec registry's search function imports encodings.<the
            # encoding's name>, a codec module; time's and datetime's C code _strptime.
            if static_import(frame, name) or name in c_helpers or \
                    (name.startswith("encodings.") and
                     frame.f_globals.get("__name__") == "encodings"):
                return None
            raise ModuleNotFoundError(
                f"codeq guard: {frame.f_globals.get('__name__')!r} imports module {name!r} by a "
                f"name made at run time; policy {policy['name']} does not allow it", name=name)

    refused_names = denied | {"__import__", "getattr", "setattr", "delattr", "hasattr",
                              "attrgetter", "methodcaller"}
    audit, positional_match, library_file, bind, imported_tops, arm = _codeq_audit_hook(  # noqa: F821
        policy, job, denied_name, module_allowed, denied_attrs, refused_names,
        lambda value: swapped(value) is value, seal_module.arm)
    guard_str_format(guarded_format, guarded_format_map)
    swaps[id(real_format)] = (real_format, guarded_format)  # a library's alias, if one ever has it
    swaps[id(real_format_map)] = (real_format_map, guarded_format_map)
    harden()
    # The proxies of allowed modules already loaded (a zygote's preload) are built here, once,
    # as the job's first imports would build them, instead of in every job (numpy's: ~2 ms).
    for name in sorted(allowed):
        if name in _sys.modules:
            proxy(_sys.modules[name])
    harden()  # a zygote's classes are sealed here, once, in pages its jobs share

    def start(given_code):
        """Runs main.py (given_code: its code object, compiled by the worker's validator, or
        None) and returns its exit status; everything that depends on the job happens here."""
        bind()
        if type(given_code) is _types.CodeType and given_code.co_filename == _JOB_FILE:
            main_code = given_code
        else:
            with _io.open(_JOB_FILE, "rb") as f:
                source = f.read()
            try:
                main_code = compile(source, _JOB_FILE, "exec", dont_inherit=True)
            except SyntaxError:
                _sys.excepthook(*_sys.exc_info()[:2], None)
                return 1
        if positional_match(main_code):
            # MATCH_CLASS reads the attributes __match_args__ names without any hook: the static
            # rule match-positional, again here for policies that turn it off.
            print("PermissionError: codeq guard: positional sub-patterns in a class pattern are not "
                  f"allowed by policy {policy['name']}; use keyword sub-patterns", file=_sys.stderr)
            return 1
        # The allowed modules main.py imports are imported before the hook, as a zygote's
        # preload is: a library's import-time code is the library's, not the job's, and under
        # the hook numpy's failed (it sets os.environ and builds functions from code objects),
        # so exec mode could not run a numpy job. Only top-level names, as a preload.
        for name in set(imported_tops(main_code)):
            if name and module_allowed(name) and name not in _sys.modules:
                try:
                    real_import(name, None, None, (), 0)
                except Exception:
                    pass  # main.py's own import raises it again, under the hook
        harden()
        main = job["main"] = module_type("__main__")
        main.__dict__.update(__file__=_JOB_FILE, __builtins__=job_builtins, __cached__=None)
        _sys.modules["__main__"] = main
        _sys.argv[:] = [_JOB_FILE]
        _sys.meta_path.insert(0, JobImportFinder)
        job["code"] = main_code
        arm()
        _sys.addaudithook(audit)
        try:
            exec(main_code, main.__dict__)
        except SystemExit:
            raise
        except BaseException as e:
            tb = e.__traceback__
            # Start the traceback at main.py, as a direct run of main.py would.
            while tb is not None and tb.tb_frame.f_code.co_filename != _JOB_FILE:
                tb = tb.tb_next
            if tb is not None:
                e.with_traceback(tb)
            _sys.excepthook(type(e), e, e.__traceback__)
            return 1
        return 0

    return start


# A zygote runs this file once with _CODEQ_PREPARE set and keeps _CODEQ_START, which it calls
# in each job's process (the preparation above costs ~1 ms that jobs then do not pay); a fresh
# interpreter prepares and starts at once. _CODEQ_MAIN_CODE is set by the zygote before this
# runs (never by the job: none of its code ran yet).
_CODEQ_START = _codeq_prepare(_CODEQ_POLICY)  # noqa: F821 (defined by the generated first line)
if not globals().pop("_CODEQ_PREPARE", False):
    _sys.exit(_CODEQ_START(globals().pop("_CODEQ_MAIN_CODE", None)))
