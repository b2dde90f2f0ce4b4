# pip install ./python: the package, with its C extension (hgas._fast) where a C compiler and
# Python's headers are at hand; without them the package installs anyway and uses ctypes alone.
from setuptools import Extension, setup

setup(packages=["hgas"], package_data={"hgas": ["py.typed"]},
      ext_modules=[Extension("hgas._fast", ["hgas/_fast.c"], optional=True)])
