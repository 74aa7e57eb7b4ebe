"""The integrity scan: honest notebooks pass clean, every hostile construct is found in place."""

import csv
import io
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from decompkit.course.integrity import (
    KINDS,
    PROTECTED_MODULES,
    Flag,
    format_report,
    main,
    scan_notebook,
    scan_submission,
    to_rows,
)

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
RELEASED = sorted((ROOT / "notebooks").glob("*/*.ipynb"))

SETUP = (
    "%matplotlib inline\n"
    "import numpy as np\n"
    "import os, sys\n"
    "from decompkit.exercises import chain\n"
    "from decompkit.variants import params\n"
    "P = params('chain')"
)
ANSWER_CELL = 2  # index of the answer cell in the notebooks built below


def _graded(source, grade_id, **flags):
    return new_code_cell(source, metadata={"nbgrader": {"grade_id": grade_id, **flags}})


def _notebook(*answers, setup=SETUP):
    """Markdown, a setup cell, then one answer cell per source, each followed by a test cell."""
    cells = [new_markdown_cell("# Part 1 (1 point)"), new_code_cell(setup)]
    for number, source in enumerate(answers):
        cells.append(_graded(source, f"item{number}_answer", solution=True, grade=False))
        cells.append(
            _graded(
                "from decompkit.grading import close\nassert close(x, 1.0)",
                f"item{number}_value",
                grade=True,
                locked=True,
                points=1,
            )
        )
    return new_notebook(cells=cells)


def _found(flags, severity):
    return [(f.cell, f.line, f.kind) for f in flags if f.severity == severity]


# --- honest notebooks ----------------------------------------------------------------------


def test_the_course_notebooks_exist():
    # Seven exercise notebooks and the lab.
    assert len(SOLUTIONS) == len(RELEASED) == 8


@pytest.mark.parametrize("path", SOLUTIONS + RELEASED, ids=lambda p: str(p.relative_to(ROOT)))
def test_course_notebooks_raise_no_flag(path):
    # Their locked cells import decompkit, call its functions, re-import from builtins:
    # calling and reading is fine; only assigning into modules is suspicious.
    flags = scan_notebook(path)
    assert [f for f in flags if f.severity == "flag"] == []


HONEST = {
    "call_numpy": "np.random.seed(0)\nx = np.isclose(1.0, 1.0)",
    "rebind_alias_value": "x = np.pi\nx += 1",
    "shadow_builtin_name": "list = [1, 2]\nlist[0] = 3\nmax = 0\nmax += 1",
    "own_dict": "d = {}\nd['a'] = 1\nd.update(b=2)",
    "copy_package_data": "items = dict(chain.CHECK_ITEMS)\nitems['extra'] = 'x'",
    "read_package_data": "text = chain.CHECK_ITEMS['unit_tests']",
    "numpy_functions_named_like_mutators": "a = np.append(np.zeros(2), 1)\nb = np.sort(a)",
    "array_item": "T = np.zeros((2, 2))\nT[0, 1] = P.p",
    "write_here": "with open('notes.txt', 'w') as f:\n    f.write('x')\nopen('log.txt', 'a')",
    "read_above": "text = open('../README.md').read()",
    "str_replace": "s = 'a/b'.replace('/', '..')",
    "pathlib_inside": (
        "from pathlib import Path\n"
        "Path('results').mkdir(exist_ok=True)\n"
        "Path('results/fig.png').parent.mkdir(exist_ok=True)\n"
        "(Path('results') / 'out.txt').write_text('x')"
    ),
    "matplotlib_settings": "import matplotlib as mpl\nmpl.rcParams['figure.dpi'] = 100",
    "import_from_builtins": "from builtins import len, set\nn = len(set([1, 1]))",
    "math_call": "import math\nok = math.isclose(1, 1)",
    "own_class": "class A:\n    x = 1\nA.x = 2",
    "sys_reads": "sys.setrecursionlimit(5000)\nv = sys.version_info",
    "os_reads": "p = os.path.join('a', 'b')\nfiles = os.listdir('.')",
    "environ_reads": "home = os.environ.get('HOME')\nuser = os.environ['USER'] if 0 else None",
    "strings_mentioning_attacks": "s = 'os.system(1)'\nt = \"get_ipython().run_cell\"",
    "name_like_get_ipython": "get_ipython_count = 3",
    "cell_magics_with_python": "%%time\ny = np.log(2)",
    "timeit_line_magic": "%timeit -n1 -r1 np.log(2)",
    "function_parameter_named_open": "def f(open):\n    return open",
    "ipython_display": (
        "from IPython.display import display, Markdown\ndisplay(Markdown('x'))\n"
        "import IPython\nIPython.display.display(1)"
    ),
    # the visible check may be asked as often as a student likes: that is its purpose (the
    # README names it as a limit of what the scan can tell)
    "visible_check_in_a_loop": (
        "for guess in range(1, 10):\n    if chain.check('k_attempts', 1 - (1 - P.p) ** guess, P):"
        "\n        break"
    ),
    "json_calls": "import json\ns = json.dumps({'a': 1})\nd = json.loads(s)",
    "sort_key_argument": (
        "xs = sorted([3, -1], key=abs)\nys = sorted(P.tools, key=lambda t: t[::-1])"
    ),
    "own_getters": (
        "def size(g):\n    return g.n\n\nn = size(P)\nfirst = (lambda t: t[0])(P.tools)\n"
        "import operator\np = operator.attrgetter('p')(P)"
    ),
    "names_of_the_parameters": "v = getattr(P, 'p')\nd = vars(P)['n']\nw = P.__dict__.get('d')",
    "exercise_helpers": "table = chain.CHECK_ITEMS\nok = chain.check_kinds({})",
}


@pytest.mark.parametrize("source", HONEST.values(), ids=HONEST.keys())
def test_honest_code_is_not_reported(source):
    assert scan_notebook(_notebook(source)) == []


# --- the attacks known against plain nbgrader ----------------------------------------------

KNOWN_ATTACKS = {
    "input_transformer": (
        "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])",
        "hook",
        "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])",
    ),
    "numpy_isclose": (
        "import numpy; numpy.isclose = lambda *a, **k: True",
        "module-patch",
        "numpy.isclose = lambda *a, **k: True",
    ),
    "builtins_assertion": (
        "import builtins; builtins.AssertionError = Exception",
        "builtins",
        "builtins.AssertionError = Exception",
    ),
    "grading_close": (
        "from decompkit import grading; grading.close = lambda *a, **k: True",
        "module-patch",
        "grading.close = lambda *a, **k: True",
    ),
    "gradebook_write": (
        "open('../../../gradebook.db', 'w')",
        "file-write",
        "open('../../../gradebook.db', 'w')",
    ),
    "os_exit": ("import os; os._exit(0)", "process", "os._exit(0)"),
}


@pytest.mark.parametrize("source, kind, construct", KNOWN_ATTACKS.values(), ids=KNOWN_ATTACKS)
def test_known_attacks_are_flagged_in_place(source, kind, construct):
    flags = scan_notebook(_notebook("x = 1.0", source), name="01-chain-reliability.ipynb")
    assert len(flags) == 1
    (flag,) = flags
    assert flag == Flag(
        "01-chain-reliability.ipynb", 4, "item1_answer", 1, kind, construct, "flag", flag.reason
    )
    assert flag.reason


def test_attack_inserted_into_a_solution_notebook_is_the_only_flag():
    nb = nbformat.read(SOLUTIONS[0], as_version=4)
    nb.cells.insert(4, new_code_cell("p_chain = 0.5\nimport builtins\nbuiltins.float = int"))
    flags = scan_notebook(nb)
    assert _found(flags, "flag") == [(4, 3, "builtins")]
    assert flags[0].grade_id is None  # a cell the student added has no grade_id


# --- a bank of hostile constructs: (source, line, kind, text the construct shows) ----------

HOSTILE = {
    # the environment names the student whose numbers the hidden tests use
    "environ_item": (
        "import os\nos.environ['DECOMPKIT_STUDENT'] = 'friend'",
        2,
        "environment",
        "os.environ",
    ),
    "environ_alias": ("from os import environ as e\ne['X'] = '1'", 2, "environment", "e["),
    "environ_update": ("os.environ.update(DECOMPKIT_STUDENT='x')", 1, "environment", "update"),
    "environ_delete": ("del os.environ['DECOMPKIT_STUDENT']", 1, "environment", "del"),
    "putenv": ("os.putenv('DECOMPKIT_STUDENT', 'x')", 1, "environment", "putenv"),
    # the answer keys sit in the package for the visible checks
    "exercise_key": (
        "from decompkit.exercises import chain\nk = chain.key(P)",
        2,
        "answer-key",
        "key",
    ),
    "answer_key_module": (
        "from decompkit.course import key\nrows = key.answer_key('s1')",
        2,
        "answer-key",
        "answer_key",
    ),
    "expected_call": (
        "from decompkit.exercises import expected\np_chain = expected('chain', 'chain_success')",
        2,
        "answer-key",
        "expected",
    ),
    "lab_expected_call": (
        "from decompkit.lab.checks import expected\nplan_times = expected('plan_times')",
        2,
        "answer-key",
        "expected",
    ),
    "lab_expected_through_module": (
        "from decompkit import lab\nplan_times = lab.checks.expected('plan_times')",
        2,
        "answer-key",
        "expected",
    ),
    # ... and the other ways to reach them: the module's namespace, a wrapper, a getter, a
    # function of one's own, another key function, a name or a module chosen at run time
    "key_through_vars": ("k = vars(chain)['key'](P)", 1, "answer-key", "vars(chain)['key']"),
    "key_through_dict": ("k = chain.__dict__['key'](P)", 1, "answer-key", "__dict__"),
    "key_through_dict_get": ("k = chain.__dict__.get('key')(P)", 1, "answer-key", "get('key')"),
    "key_unwrapped": ("k = chain.key.__wrapped__(P)", 1, "answer-key", "__wrapped__"),
    "key_attrgetter": (
        "import operator\nk = operator.attrgetter('key')(chain)(P)",
        2,
        "answer-key",
        "attrgetter",
    ),
    "key_attrgetter_bound": (
        "from operator import attrgetter\nget = attrgetter('key')\nk = get(chain)(P)",
        3,
        "answer-key",
        "get(chain)",
    ),
    "key_methodcaller": (
        "import operator\nk = operator.methodcaller('key', P)(chain)",
        2,
        "answer-key",
        "methodcaller",
    ),
    "key_lambda": ("k = (lambda m: m.key)(chain)(P)", 1, "answer-key", "lambda"),
    "key_lambda_bound": ("pick = lambda m: m.key\nk = pick(chain)(P)", 2, "answer-key", "pick"),
    "key_own_function": (
        "def pick(m):\n    return m.key\n\nk = pick(chain)(P)",
        4,
        "answer-key",
        "pick(chain)",
    ),
    "key_referenced": ("f = chain.key\nk = list(map(f, [P]))", 1, "answer-key", "chain.key"),
    "key_partial": (
        "import functools\nk = functools.partial(chain.key, P)()",
        2,
        "answer-key",
        "chain.key",
    ),
    "other_key_function": ("kinds = chain.kinds_key()", 1, "answer-key", "kinds_key"),
    "key_of_the_registry": (
        "from decompkit.exercises.params import EXERCISES\nk = EXERCISES['chain'].key(P)",
        2,
        "answer-key",
        "key",
    ),
    "key_from_sys_modules": (
        "k = sys.modules['decompkit.exercises.chain'].key(P)",
        1,
        "answer-key",
        "key",
    ),
    "key_name_at_run_time": (
        "name = 'k' + 'ey'\nk = getattr(chain, name)(P)",
        2,
        "answer-key",
        "getattr(chain, name)",
    ),
    "exercise_imported_at_run_time": (
        "import importlib\nm = importlib.import_module('decompkit.exercises.' + 'chain')",
        2,
        "answer-key",
        "import_module",
    ),
    # hooks that would forge what the kernel exports: the grader reads each answer out with
    # __import__('decompkit.course.engine.codec').encode(name), which builds JSON
    "import_shadowed": ("__import__ = lambda *a, **k: None", 1, "builtins", "__import__"),
    "import_shadowed_in_globals": (
        "globals()['__import__'] = print",
        1,
        "builtins",
        "globals()['__import__']",
    ),
    "json_patched": ("import json\njson.dumps = lambda *a, **k: '1'", 2, "module-patch", "dumps"),
    "codec_patched": (
        "from decompkit.course.engine import codec\ncodec.encode = str",
        2,
        "module-patch",
        "codec.encode",
    ),
    # IPython hooks
    "ast_transformers": ("ip = get_ipython()\nip.ast_transformers.append(t)", 1, "hook", "get_"),
    "events_register": ("get_ipython().events.register('pre_run_cell', f)", 1, "hook", "events"),
    "register_magic": ("get_ipython().register_magic_function(f)", 1, "hook", "register_magic"),
    "run_cell": ("x = 1\nget_ipython().run_cell('x = 2')", 2, "hook", "run_cell"),
    "post_transformers": (
        "get_ipython().input_transformers_post.append(t)",
        1,
        "hook",
        "input_transformers_post",
    ),
    "get_ipython_alias": ("g = get_ipython\ng().events", 1, "hook", "get_ipython"),
    "get_ipython_imported": ("from IPython import get_ipython as g", 1, "hook", "import"),
    "interactive_shell": (
        "from IPython.core.interactiveshell import InteractiveShell\n",
        1,
        "hook",
        "InteractiveShell",
    ),
    "written_run_line_magic": ("get_ipython().run_line_magic('cd', '..')", 1, "hook", "cd"),
    "hook_inside_time_magic": ("%time get_ipython().events.register('x', f)", 1, "hook", "%time"),
    "settrace": ("sys.settrace(lambda *a: None)", 1, "hook", "settrace"),
    # builtins
    "builtins_attribute": ("import builtins\nbuiltins.print = len", 2, "builtins", "print"),
    "builtins_alias": ("import builtins as b\nb.len = lambda x: 0", 2, "builtins", "b.len"),
    "builtins_setattr": ("import builtins\nsetattr(builtins, 'abs', f)", 2, "builtins", "setattr"),
    "builtins_dunder_setattr": (
        "import builtins\nbuiltins.__setattr__('len', f)",
        2,
        "builtins",
        "__setattr__",
    ),
    "object_setattr": ("object.__setattr__(np, 'isclose', f)", 1, "module-patch", "object"),
    "code_dunder_setattr": (
        "from decompkit.grading import close\nclose.__setattr__('__code__', c)",
        2,
        "code-patch",
        "__setattr__",
    ),
    "builtins_delattr": ("import builtins\ndelattr(builtins, 'abs')", 2, "builtins", "delattr"),
    "dunder_builtins_item": ("__builtins__['float'] = int", 1, "builtins", "__builtins__["),
    "dunder_builtins_attribute": ("__builtins__.float = int", 1, "builtins", "float"),
    "dunder_builtins_rebound": ("__builtins__ = {}", 1, "builtins", "__builtins__ = {}"),
    "builtins_vars": ("import builtins\nvars(builtins)['len'] = f", 2, "builtins", "vars"),
    "builtins_dict_update": (
        "import builtins\nbuiltins.__dict__.update(len=f)",
        2,
        "builtins",
        "update",
    ),
    "builtins_via_globals": ("globals()['__builtins__'].abs = f", 1, "builtins", "abs"),
    "builtins_augmented": ("import builtins\nbuiltins.x += 1", 2, "builtins", "+="),
    # sys.modules and the import machinery
    "sys_modules_item": ("sys.modules['decompkit.grading'] = fake", 1, "sys.modules", "fake"),
    "sys_modules_delete": ("del sys.modules['numpy']", 1, "sys.modules", "del"),
    "sys_modules_update": ("sys.modules.update({'numpy': fake})", 1, "sys.modules", "update"),
    "sys_modules_rebound": ("import sys as s\ns.modules = {}", 2, "sys.modules", "s.modules"),
    "meta_path": ("sys.meta_path.insert(0, finder)", 1, "sys.modules", "meta_path"),
    "module_from_sys_modules": (
        "sys.modules['numpy'].isclose = f",
        1,
        "module-patch",
        "sys.modules['numpy']",
    ),
    # numpy, any alias
    "numpy_alias": ("np.isclose = lambda *a, **k: True", 1, "module-patch", "np.isclose"),
    "numpy_submodule": (
        "import numpy\nnumpy.testing.assert_allclose = f",
        2,
        "module-patch",
        "assert_allclose",
    ),
    "numpy_testing_alias": (
        "import numpy.testing as npt\nnpt.assert_allclose = f",
        2,
        "module-patch",
        "npt",
    ),
    "numpy_from_import": ("from numpy import testing as t\nt.x = f", 2, "module-patch", "t.x"),
    "numpy_setattr": ("setattr(np, 'allclose', f)", 1, "module-patch", "setattr"),
    "numpy_delattr": ("delattr(np, 'allclose')", 1, "module-patch", "delattr"),
    "numpy_del": ("del np.allclose", 1, "module-patch", "del np.allclose"),
    "numpy_assigned_alias": ("m = np\nm.allclose = f", 2, "module-patch", "m.allclose"),
    "numpy_tuple_target": ("a, np.allclose = 1, f", 1, "module-patch", "np.allclose"),
    "numpy_dunder_import": ("__import__('numpy').isclose = f", 1, "module-patch", "__import__"),
    "numpy_import_module": (
        "import importlib\nimportlib.import_module('numpy.testing').x = f",
        2,
        "module-patch",
        "import_module",
    ),
    "numpy_class": ("np.ndarray.__eq__ = f", 1, "module-patch", "ndarray"),
    # decompkit and the test helpers, any alias
    "grading_alias": (
        "from decompkit import grading as g\ng.close = lambda *a, **k: True",
        2,
        "module-patch",
        "g.close",
    ),
    "grading_dotted": (
        "import decompkit.grading\ndecompkit.grading.close = f",
        2,
        "module-patch",
        "decompkit.grading.close",
    ),
    "grading_dotted_as": (
        "import decompkit.grading as dg\ndg.same_bool = f",
        2,
        "module-patch",
        "dg.same_bool",
    ),
    "grading_setattr": (
        "import decompkit.grading as dg\nsetattr(dg, 'close', f)",
        2,
        "module-patch",
        "setattr",
    ),
    "exercise_module": ("chain.check = lambda *a: True", 1, "module-patch", "chain.check"),
    "variants_module": (
        "import decompkit.variants\ndecompkit.variants.params = f",
        2,
        "module-patch",
        "params",
    ),
    "answer_key_item": ("chain._KIND['tone_fits'] = 'formal'", 1, "module-patch", "_KIND"),
    "answer_key_update": ("chain.CHECK_ITEMS.update(x='y')", 1, "module-patch", "update"),
    "function_defaults": (
        "from decompkit.grading import close\nclose.__defaults__ = (1.0, 1.0)",
        2,
        "code-patch",
        "__defaults__",
    ),
    "function_code": (
        "from decompkit.grading import close\nclose.__code__ = (lambda *a, **k: True).__code__",
        2,
        "code-patch",
        "__code__",
    ),
    "frame_jump": ("def t(frame, e, a):\n    frame.f_lineno = 3", 2, "code-patch", "f_lineno"),
    "code_setattr": ("setattr(f, '__code__', g.__code__)", 1, "code-patch", "setattr"),
    "math_patch": ("import math as m\nm.isnan = lambda x: False", 2, "module-patch", "isnan"),
    # file writes outside the working folder
    "open_append_absolute": ("open('/tmp/x', 'a')", 1, "file-write", "'/tmp/x'"),
    "open_keyword_mode": ("open(file='../g.db', mode='r+')", 1, "file-write", "r+"),
    "open_exclusive": ("f = open('~/x', 'x')", 1, "file-write", "'~/x'"),
    "open_binary_write": ("open('../../x.db', 'wb').write(b'')", 1, "file-write", "wb"),
    "open_unknown_mode_outside": ("open('../x', m)", 1, "file-write", "open('../x', m)"),
    "io_open": ("import io\nio.open('/etc/passwd', 'w')", 2, "file-write", "io.open"),
    "path_write_text": (
        "from pathlib import Path\nPath('../gradebook.db').write_text('x')",
        2,
        "file-write",
        "write_text",
    ),
    "path_write_bytes": (
        "import pathlib\npathlib.Path('/root/x').write_bytes(b'')",
        2,
        "file-write",
        "write_bytes",
    ),
    "path_unlink": ("from pathlib import Path\nPath('..', 'g.db').unlink()", 2, "file-write", "."),
    "path_touch": (
        "from pathlib import Path\n(Path('a') / '/etc/x').touch()",
        2,
        "file-write",
        "/",
    ),
    "path_rename": (
        "from pathlib import Path\np = Path('mine.txt')\np.rename('../../other.txt')",
        3,
        "file-write",
        "rename",
    ),
    "path_parent": (
        "from pathlib import Path\n(Path.cwd().parent / 'g.db').write_text('')",
        2,
        "file-write",
        "parent",
    ),
    "path_home": ("from pathlib import Path\n(Path.home() / 'x').touch()", 2, "file-write", "home"),
    "path_built_in_loop": (
        "import pathlib\nfor up in range(1, 6):\n    base = pathlib.Path('../' * up)\n"
        "    (base / 'gradebook.db').write_text('x')",
        4,
        "file-write",
        "write_text",
    ),
    "path_through_variable": ("target = '../g.db'\nf = open(target, 'w')", 2, "file-write", "open"),
    "os_remove": ("os.remove('../gradebook.db')", 1, "file-write", "os.remove"),
    "os_unlink": ("os.unlink('/x')", 1, "file-write", "os.unlink"),
    "os_rename": ("os.rename('a.txt', '../a.txt')", 1, "file-write", "os.rename"),
    "os_replace": ("os.replace('../a', 'b')", 1, "file-write", "os.replace"),
    "os_join": ("os.remove(os.path.join('..', 'g.db'))", 1, "file-write", "os.path.join"),
    "os_open_flags": ("os.open('../g', os.O_WRONLY | os.O_CREAT)", 1, "file-write", "O_WRONLY"),
    "shutil_rmtree": ("import shutil\nshutil.rmtree('../..')", 2, "file-write", "rmtree"),
    "shutil_move": ("import shutil\nshutil.move('x', '/srv/x')", 2, "file-write", "move"),
    "shutil_copy": ("import shutil as sh\nsh.copy2('mine.db', '../g.db')", 2, "file-write", "sh."),
    "shutil_copytree": (
        "from shutil import copytree\ncopytree('.', '../../release')",
        2,
        "file-write",
        "copytree",
    ),
    "sqlite_connect": ("import sqlite3\nsqlite3.connect('../gradebook.db')", 2, "file-write", "sq"),
    "writefile_magic": ("%%writefile ../../nbgrader_config.py\nc = 1", 1, "file-write", "%%"),
    # subprocesses and process control
    "subprocess_import": ("import subprocess", 1, "process", "import subprocess"),
    "subprocess_run": (
        "import subprocess as sp\nx = 1\nsp.run(['ls'])",
        3,
        "process",
        "sp.run(['ls'])",
    ),
    "subprocess_from": ("from subprocess import Popen", 1, "process", "Popen"),
    "os_system": ("os.system('rm -rf ..')", 1, "process", "os.system"),
    "os_popen": ("os.popen('ls').read()", 1, "process", "os.popen"),
    "os_execv": ("os.execv('/bin/sh', ['sh'])", 1, "process", "os.execv"),
    "os_spawnl": ("os.spawnl(os.P_WAIT, '/bin/true')", 1, "process", "os.spawnl"),
    "os_kill": ("os.kill(os.getpid(), 9)", 1, "process", "os.kill"),
    "os_exit_from_import": ("from os import _exit\n_exit(0)", 1, "process", "_exit"),
    "os_system_getattr": ("getattr(os, 'system')('ls')", 1, "process", "getattr"),
    "pty": ("import pty\npty.spawn('/bin/sh')", 1, "process", "import pty"),
    "multiprocessing": ("from multiprocessing import Process", 1, "process", "Process"),
    "ctypes": ("import ctypes\nctypes.string_at(0)", 1, "process", "import ctypes"),
    "ctypes_use": ("import ctypes as c\nx = 1\nc.pythonapi", 3, "process", "c.pythonapi"),
    "star_import": ("from os import *\nsystem('ls')", 2, "process", "system('ls')"),
    # code the scan reads through
    "exec_literal": ("exec('import os\\nos.system(1)')", 1, "process", "os.system"),
    "exec_multiline": ('exec("""\nx = 1\nos.system(1)\n""")', 3, "process", "os.system"),
    "capture_body": ("%%capture\nx = 1\nos.system('ls')", 3, "process", "os.system"),
    "autocall_escape": ("x = 1\n/os.system 'ls'", 2, "process", "os.system"),
    "autocall_quote_escape": (";os.system rm -rf ..", 1, "process", "os.system"),
    "time_magic_argument": ("%time os.system('ls')", 1, "process", "os.system('ls')"),
    "leading_blank_lines": ("\n\nx = 1\nos._exit(0)", 4, "process", "os._exit"),
    "indented_cell": ("    x = 1\n    os._exit(0)", 2, "process", "os._exit"),
    "inside_function": ("def f():\n    import builtins\n    builtins.x = 1", 3, "builtins", "x"),
    "global_in_function": (
        "def f():\n    global b\n    import builtins as b\nf()\nb.len = 1",
        5,
        "builtins",
        "b.len",
    ),
    "conditional_rebinding_keeps_alias": (
        "if P.n > 100:\n    np = {}\nnp.isclose = f",
        3,
        "module-patch",
        "np.isclose",
    ),
    "loop_over_modules": ("for m in (np, sys):\n    setattr(m, 'x', 1)", 2, "module-patch", "m"),
    "walrus": ("(m := np).isclose = f", 1, "module-patch", "isclose"),
}


@pytest.mark.parametrize("source, line, kind, text", HOSTILE.values(), ids=HOSTILE)
def test_hostile_construct_is_flagged_with_cell_and_line(source, line, kind, text):
    flags = scan_notebook(_notebook(source), name="sub.ipynb")
    hits = [f for f in flags if (f.cell, f.line, f.kind, f.severity) == (2, line, kind, "flag")]
    assert hits, flags
    assert all(f.cell == ANSWER_CELL and f.grade_id == "item0_answer" for f in flags)
    assert any(text in f.construct for f in hits), hits
    assert all(f.notebook == "sub.ipynb" and f.reason for f in flags)


NOTES = {
    "run_magic": ("x = 1\n%run helper.py", 2, "magic", "runs another file"),
    "shell_line": ("!ls ..", 1, "magic", "shell command"),
    "shell_assignment": ("files = !ls", 1, "magic", "shell command"),
    "shell_double_bang": ("!!ls", 1, "magic", "shell command"),
    "shell_in_block": ("if True:\n    !rm x", 2, "magic", "shell command"),
    "cd_magic": ("%cd ..", 1, "magic", "working folder"),
    "bash_cell": ("%%bash\nrm -rf ../..", 1, "magic", "body not scanned"),
    "other_cell_magic": ("%%perl\nprint 1", 1, "magic", "body not scanned"),
    "computed_path": ("name = input()\nopen(name, 'w')", 2, "file-write", "path not checkable"),
    "fstring_path": ("d = P.n\nopen(f'{d}/x.txt', 'w')", 2, "file-write", "path not checkable"),
    "computed_mode": ("open(P.name, mode)", 1, "file-write", "path and mode not checkable"),
    "unknown_path_method": ("p.write_text('x')", 1, "file-write", "path not checkable"),
    "loop_path": ("for i in range(3):\n    os.remove(f'f{i}')", 2, "file-write", "not checkable"),
    "syntax_error": ("x = 1\ndef f(:\n    pass", 2, "syntax", "does not parse"),
    "unterminated_string": ("s = '''abc", 1, "syntax", "does not parse"),
    "eval_of_variable": ("code = 'x'\nresult = eval(code)", 2, "dynamic-code", "cannot read"),
    "exec_of_variable": ("exec(P.text)", 1, "dynamic-code", "cannot read"),
    "dynamic_import": ("m = __import__(name)", 1, "dynamic-code", "named at run time"),
    "dynamic_globals": ("f = globals()['get_' + 'ipython']", 1, "dynamic-code", "run time"),
    "dynamic_getattr": ("f = getattr(os, 'sys' + 'tem')", 1, "dynamic-code", "run time"),
}


@pytest.mark.parametrize("source, line, kind, reason", NOTES.values(), ids=NOTES)
def test_undecidable_or_unusual_constructs_are_notes(source, line, kind, reason):
    flags = scan_notebook(_notebook(source))
    hits = [f for f in flags if (f.cell, f.line, f.kind) == (2, line, kind)]
    assert hits, flags
    assert reason in hits[0].reason
    assert {f.severity for f in flags} == {"note"}


def test_every_kind_has_an_example_in_the_banks():
    kinds = {kind for _, _, kind, _ in [*HOSTILE.values(), *NOTES.values()]}
    assert kinds | {"notebook"} == set(KINDS)


def test_protected_modules_cover_what_the_hidden_tests_use():
    assert {"builtins", "sys", "numpy", "decompkit"} <= set(PROTECTED_MODULES)


# --- order and aliases across cells --------------------------------------------------------


def test_aliases_carry_across_cells_in_order():
    nb = _notebook(
        "import builtins as b\nfrom decompkit import grading as g",
        "x = 1.0",
        "b.AssertionError = Exception\ng.close = f",
        setup="import numpy as np",
    )
    flags = scan_notebook(nb)
    assert _found(flags, "flag") == [(6, 1, "builtins"), (6, 2, "module-patch")]
    assert [f.grade_id for f in flags] == ["item2_answer"] * 2


def test_an_alias_rebound_in_straight_line_code_is_released():
    nb = _notebook("np = {}", "np['isclose'] = 1\nnp.update(x=1)", setup="import numpy as np")
    assert scan_notebook(nb) == []


def test_an_assignment_before_the_import_is_not_blamed_on_it():
    nb = _notebook("np = {}\nnp['x'] = 1", "import numpy as np\nnp.isclose = f", setup="x = 0")
    assert _found(scan_notebook(nb), "flag") == [(4, 2, "module-patch")]


def test_future_imports_change_how_later_cells_parse():
    # `<>` parses only after this future import: a scan that ignored it would see a syntax
    # error and miss the call that the kernel runs.
    nb = _notebook("from __future__ import barry_as_FLUFL", "if 1 <> 2:\n    os.system('ls')")
    assert _found(scan_notebook(nb), "flag") == [(4, 2, "process")]
    assert _found(scan_notebook(nb), "note") == []


def test_markdown_and_raw_cells_are_not_code():
    nb = _notebook("x = 1")
    nb.cells.append(new_markdown_cell("import os\nos.system('ls')"))
    nb.cells.append(nbformat.v4.new_raw_cell("os._exit(0)"))
    assert scan_notebook(nb) == []


def test_cell_source_stored_as_a_list_of_lines():
    nb = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": ["import os\n", "os._exit(0)"]}]
    }
    assert _found(scan_notebook(nb), "flag") == [(0, 2, "process")]


def test_a_cell_too_deep_to_walk_is_flagged_not_a_crash():
    # Python compiles 1000 nested minus signs (so the kernel runs the cell) but the scan's
    # walk cannot follow: the cell must be looked at. 5000 do not compile at all: a note.
    flags = scan_notebook(_notebook("x = 1\ny = " + "-" * 1000 + "1\nos._exit(0)"))
    assert _found(flags, "flag") == [(2, 2, "syntax"), (2, 3, "process")]
    assert flags[0].reason == "too deeply nested to scan"
    flags = scan_notebook(_notebook("x = " + "-" * 5000 + "1"))
    assert [(f.cell, f.kind, f.severity) for f in flags] == [(2, "syntax", "note")]


# --- files and folders ---------------------------------------------------------------------


def test_scan_of_a_path_names_the_file(tmp_path):
    path = tmp_path / "02-long-horizons.ipynb"
    nbformat.write(_notebook("import os; os._exit(0)"), path)
    (flag,) = scan_notebook(path)
    assert (flag.notebook, flag.cell, flag.line, flag.kind) == (path.name, 2, 1, "process")
    (renamed,) = scan_notebook(str(path), name="alice/02")
    assert renamed.notebook == "alice/02"


def test_scan_submission_reads_every_notebook_and_survives_bad_files(tmp_path):
    nbformat.write(_notebook("import builtins; builtins.len = f"), tmp_path / "a.ipynb")
    (tmp_path / "b.ipynb").write_bytes(b'{"cells": [ this is not json')
    (tmp_path / "c.ipynb").write_text(json.dumps([1, 2]))
    (tmp_path / "d.ipynb").write_bytes(b"\xff\xfe not text")
    nbformat.write(_notebook("x = 1.0"), tmp_path / "e.ipynb")
    (tmp_path / "notes.txt").write_text("import os; os._exit(0)")
    (tmp_path / "sub").mkdir()
    nbformat.write(_notebook("os._exit(0)"), tmp_path / "sub" / "f.ipynb")
    flags = scan_submission(tmp_path)
    assert [(f.notebook, f.cell, f.kind, f.severity) for f in flags] == [
        ("a.ipynb", 2, "builtins", "flag"),
        ("b.ipynb", None, "notebook", "flag"),
        ("c.ipynb", None, "notebook", "flag"),
        ("d.ipynb", None, "notebook", "flag"),
    ]
    assert "not a readable notebook" in flags[1].reason
    assert "no list of cells" in flags[2].reason


def test_scan_submission_of_the_solutions_is_clean():
    assert [f for f in scan_submission(SOLUTIONS[0].parent) if f.severity == "flag"] == []


# --- report and rows -----------------------------------------------------------------------


def _mixed_flags():
    nb = _notebook("x = 1\n%run helper.py", "import os\nos.system('ls')")
    return scan_notebook(nb, name="01.ipynb")


def test_format_report_lists_flags_before_notes_with_location():
    report = format_report(_mixed_flags())
    lines = report.splitlines()
    assert lines[0] == "Integrity scan: 1 flag, 1 note."
    assert lines[1].split() == [
        "severity",
        "notebook",
        "cell",
        "grade_id",
        "line",
        "kind",
        "construct",
        "reason",
    ]
    assert lines[3].split()[:7] == [
        "flag",
        "01.ipynb",
        "4",
        "item1_answer",
        "2",
        "process",
        "os.system('ls')",
    ]
    assert lines[4].split()[:6] == ["note", "01.ipynb", "2", "item0_answer", "2", "magic"]
    assert len(lines) == 5


def test_format_report_of_nothing():
    assert format_report([]) == "Integrity scan: nothing to report."


def test_to_rows_round_trips_through_csv():
    flags = _mixed_flags()
    rows = to_rows(flags)
    assert [row["kind"] for row in rows] == ["magic", "process"]
    assert list(rows[0]) == [
        "notebook",
        "cell",
        "grade_id",
        "line",
        "kind",
        "construct",
        "severity",
        "reason",
    ]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    back = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(r["cell"], r["line"], r["construct"]) for r in back] == [
        (str(f.cell), str(f.line), f.construct) for f in flags
    ]


def test_main_prints_the_report_writes_csv_and_signals_flags(tmp_path, capsys):
    hostile, clean = tmp_path / "alice", tmp_path / "bob"
    hostile.mkdir()
    clean.mkdir()
    nbformat.write(_notebook("import os; os._exit(0)"), hostile / "01.ipynb")
    nbformat.write(_notebook("x = 1.0"), clean / "01.ipynb")
    table = tmp_path / "flags.csv"
    assert main([str(hostile), str(clean), "--csv", str(table)]) == 1
    assert "os._exit(0)" in capsys.readouterr().out
    assert len(list(csv.DictReader(table.open()))) == 1
    assert main([str(clean)]) == 0
    assert "nothing to report" in capsys.readouterr().out


# --- bad input -----------------------------------------------------------------------------


def test_scan_notebook_rejects_what_is_not_a_notebook_or_path():
    with pytest.raises(ValueError, match=r"nb_or_path must be a notebook dict or a path, got 42"):
        scan_notebook(42)


def test_scan_submission_needs_a_folder(tmp_path):
    with pytest.raises(ValueError, match=r"folder must be an existing folder, got '.*missing'"):
        scan_submission(tmp_path / "missing")


def test_flag_rejects_unknown_severity_and_kind():
    with pytest.raises(ValueError, match=r"severity must be 'flag' or 'note', got 'warn'"):
        Flag("a", 0, None, 1, "process", "x", "warn")
    with pytest.raises(ValueError, match=r"kind must be one of .*, got 'bogus'"):
        Flag("a", 0, None, 1, "bogus", "x", "flag")
