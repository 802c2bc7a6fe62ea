"""Markers that the installed NumPy and SciPy test modules use (test_suites.py
runs their tests), registered so that pytest does not warn about them."""


def pytest_configure(config):
    for mark in ("slow", "fail_slow(seconds)", "parallel_threads_limit(n)",
                 "xfail_on_32bit(reason)", "thread_unsafe", "skip_xp_backends", "xslow",
                 "array_api_backends"):
        config.addinivalue_line("markers", f"{mark}: used by the NumPy / SciPy test suites")
