"""Helpers for the real-browser test (``tests/browser/test_first_day.py``).

- :mod:`browser.lab` starts and stops a sandboxed JupyterLab server;
- :mod:`browser.chromium` finds the system Chromium and launches it through Playwright;
- :mod:`browser.notebook` drives an open notebook through ``window.jupyterapp``.
"""
