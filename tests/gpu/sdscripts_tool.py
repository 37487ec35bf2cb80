"""Runs one of sd-scripts' own LoRA tool scripts (networks/resize_lora.py, sdxl_merge_lora.py, ...)
as `python SCRIPT args` would, on the GPU machine, which has PyTorch, transformers, accelerate and
safetensors but none of the packages sd-scripts' library imports only for training (diffusers,
cv2, imagesize, ...): those are stood in for by empty modules. A class taken from one (diffusers'
AutoencoderKL, which sdxl_model_util builds the VAE with) keeps the state dict it is given and hands
it back, so a checkpoint's VAE goes through the script's load and save unchanged.

Usage: python3 sdscripts_tool.py SD_SCRIPTS_DIR networks/SCRIPT.py [script args...]
Prints `TOOL_SECONDS <wall seconds of the script>` on stdout last."""
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import time
import types


class _Holder:
    """Any class of a missing package: built with anything, keeps a state dict."""

    def __init__(self, *args, **kwargs):
        self._state = {}

    def load_state_dict(self, state, strict=True, **kwargs):
        self._state = dict(state)
        return types.SimpleNamespace(missing_keys=[], unexpected_keys=[])

    def state_dict(self, *args, **kwargs):
        return dict(self._state)

    def to(self, *args, **kwargs):
        return self

    def eval(self):
        return self

    def requires_grad_(self, *args, **kwargs):
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError("sdscripts_tool.py: a stand-in class was called; this tool needs the real package")


class _StubModule(types.ModuleType):
    __path__ = []  # a package, so its submodules are looked for (and stood in for) too

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = type(name, (_Holder,), {})
        setattr(self, name, value)
        return value


# What sd-scripts' library imports for training and sampling only; anything else missing stays an
# ImportError (setup_logging falls back from rich on one). Not ftfy: sd-scripts never imports it, and
# transformers' CLIP tokenizer, which imports it where it is installed and else cleans text itself,
# would call the stand-in (ti_vs_sdscripts.py tokenizes).
_STOOD_IN = {"diffusers", "cv2", "imagesize", "toml", "voluptuous", "huggingface_hub", "torchvision", "PIL", "einops",
             "open_clip", "omegaconf", "bitsandbytes", "lion_pytorch", "prodigyopt", "schedulefree", "sentencepiece"}


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: a listed package no real finder has is stood in for, and named on stderr."""

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in _STOOD_IN:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        if "." not in spec.name:
            print(f"sdscripts_tool.py: {spec.name} is not installed here; a stand-in module takes its place", file=sys.stderr)
        return _StubModule(spec.name)

    def exec_module(self, module):
        # sd-scripts' model_util compares diffusers.__version__ (a version it pins) before converting the VAE.
        if module.__name__ == "diffusers":
            module.__version__ = "0.25.0"


def _nest_clip_text_model(sd_scripts):
    """sd-scripts pins transformers 4.x, whose CLIPTextModel holds its layers under `text_model`;
    transformers 5 flattened it (CLIPTextModelWithProjection still nests one). The scripts' LoRA module
    names (lora_te1_text_model_...) and checkpoint keys assume the nesting, so where this machine's
    CLIPTextModel is flat, sd-scripts' model loaders get one wrapped under `text_model`."""
    import torch
    import transformers

    probe = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=8, hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=1, max_position_embeddings=4))
    if hasattr(probe, "text_model"):
        return

    class NestedClipTextModel(torch.nn.Module):
        def __init__(self, config, *args, **kwargs):
            super().__init__()
            self.text_model = transformers.CLIPTextModel(config)
            self.config = config

        @classmethod
        def _from_config(cls, config, **kwargs):
            return cls(config)

        def forward(self, *args, **kwargs):
            return self.text_model(*args, **kwargs)

        def __getattr__(self, name):
            # What sd-scripts' training code asks of its text encoder beyond the modules (device,
            # get_input_embeddings, resize_token_embeddings for textual inversion) is the model's.
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(super().__getattr__("text_model"), name)

    sys.path[:0] = [sd_scripts]
    for name in ("library.model_util", "library.sdxl_model_util"):
        module = importlib.import_module(name)
        if hasattr(module, "CLIPTextModel"):
            module.CLIPTextModel = NestedClipTextModel
    print("sdscripts_tool.py: transformers' CLIPTextModel is flat here; sd-scripts' loaders get it nested under text_model",
          file=sys.stderr)


def _vae_holder_loads(sd_scripts):
    """sdxl_model_util loads the VAE by comparing the model's state_dict() keys with the checkpoint's;
    the stand-in AutoencoderKL has none until it is given them, so it is given them whole."""
    sys.path[:0] = [sd_scripts]
    module = importlib.import_module("library.sdxl_model_util")
    load = module._load_state_dict_on_device

    def load_on_device(model, state_dict, device, dtype=None):
        if isinstance(model, _Holder):
            model.load_state_dict(state_dict)
            return "<All keys matched successfully> (stand-in VAE: the checkpoint's tensors kept as they are)"
        return load(model, state_dict, device, dtype)

    module._load_state_dict_on_device = load_on_device


def sd_scripts_dir():
    """sd-scripts' checkout on the GPU machine: SINTER_SD_SCRIPTS, else .bench/sd-scripts, else .bench
    itself where its library/ was copied there (tests/gpu/README.md)."""
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".bench")
    for folder in (os.environ.get("SINTER_SD_SCRIPTS", ""), os.path.join(bench, "sd-scripts"), bench):
        if folder and os.path.isfile(os.path.join(folder, "library", "train_util.py")):
            return os.path.abspath(folder)
    raise FileNotFoundError("sd-scripts is not in .bench/sd-scripts or .bench (set SINTER_SD_SCRIPTS)")


def stand_in_missing_packages(sd_scripts):
    """What main() sets up before it runs a script, for the scripts here that import sd-scripts' own
    modules (train_textual_inversion.py's trainer: ti_vs_sdscripts.py): the stand-in packages, the
    nested CLIPTextModel and the VAE holder's loading. Call it before importing anything of sd-scripts."""
    sys.meta_path.append(_StubFinder())
    # sd-scripts' sampling pipelines import names newer transformers releases dropped; the tools never sample.
    for pipeline in ("library.lpw_stable_diffusion", "library.sdxl_lpw_stable_diffusion"):
        sys.modules[pipeline] = _StubModule(pipeline)
    _nest_clip_text_model(sd_scripts)
    _vae_holder_loads(sd_scripts)


def main():
    sd_scripts, script = sys.argv[1], sys.argv[2]
    stand_in_missing_packages(sd_scripts)
    script_path = os.path.join(sd_scripts, script)
    sys.path[:0] = [os.path.dirname(script_path), sd_scripts]
    sys.argv = [script_path] + sys.argv[3:]
    start = time.time()
    runpy.run_path(script_path, run_name="__main__")
    print(f"TOOL_SECONDS {time.time() - start:.2f}", flush=True)


if __name__ == "__main__":
    main()
