"""Build the simulated SSD's native core; all other metadata lives in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ssdlab.sim._core",
            sources=["src/ssdlab/sim/_core.c"],
            extra_compile_args=["-O2", "-std=c11"],
        )
    ]
)
