"""One py_test per Python suite file.

`python_suites(srcs = glob(["test_*.py"]))` in a test directory gives every
suite its own target (named after the file), so a new suite file is picked up
by the glob and runs under `bazel test //...` without a BUILD edit.
"""

load("@rules_python//python:py_test.bzl", "py_test")

def python_suites(name, srcs, deps = [], data = [], **kwargs):
    """Declares a py_test per suite file and a test_suite over all of them.

    Args:
        name: name of the test_suite grouping the generated tests.
        srcs: the suite files (test_*.py).
        deps: py_library targets every suite imports (helpers, the package).
        data: files the suites read at run time.
        **kwargs: passed to each py_test (size, tags, target_compatible_with...).
    """
    tests = []
    for src in srcs:
        test_name = src[:-len(".py")].replace("/", "_")
        py_test(
            name = test_name,
            srcs = [
                src,
                Label("//tools/bazel:pytest_main.py"),
            ],
            main = Label("//tools/bazel:pytest_main.py"),
            args = ["$(rootpath {})".format(src)],
            data = data,
            deps = deps + [Label("@tether_pypi//pytest")],
            **kwargs
        )
        tests.append(test_name)
    native.test_suite(
        name = name,
        tests = tests,
    )
