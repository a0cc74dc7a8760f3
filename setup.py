"""The build's one part that pyproject.toml cannot say: lspmux's optional C speedups.

`lspmux/_speedups.c` is built when the machine has a C compiler; without one the install
still succeeds (`optional=True`) and lspmux runs the same code in Python
(`lspmux/speedups.py` says which is in use, and `lspmux doctor` tells the user).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("lspmux._speedups", ["lspmux/_speedups.c"], optional=True),
    ]
)
