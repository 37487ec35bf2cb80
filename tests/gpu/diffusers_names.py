"""diffusers is not on the lent GPU machine (no PyPI there), and sd-scripts' library imports only
names from it at module level (library/utils.py: AutoencoderKL, EulerAncestralDiscreteScheduler and
its output class) for code the training-step scripts here never run. Importing this module first
puts empty stand-ins under those names, so `from library import ...` works."""
import sys
import types


class _Name:
    pass


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules.setdefault(name, m)


_module("diffusers", AutoencoderKL=_Name, EulerAncestralDiscreteScheduler=_Name)
_module("diffusers.schedulers")
_module("diffusers.schedulers.scheduling_euler_ancestral_discrete", EulerAncestralDiscreteSchedulerOutput=_Name)
