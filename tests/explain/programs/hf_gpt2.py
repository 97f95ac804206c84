"""A small GPT-2 from a config (random weights, no network), compiled and called with keyword tensors at two
sequence lengths, as Hugging Face users do: the second length recompiles on ``input_ids`` dim 1.
``HF_CALL=kwargs`` calls it through a ``**kwargs`` wrapper (torch then names ``kwargs['input_ids']``)."""

import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=64)
model = GPT2LMHeadModel(config).eval()


def step(**kwargs):
    return model(**kwargs).logits


fn = torch.compile(step if os.environ.get("HF_CALL") == "kwargs" else model, backend="eager")
with torch.no_grad():
    for seq in (8, 16):
        ids = torch.randint(0, 64, (2, seq))
        out = fn(input_ids=ids, attention_mask=torch.ones_like(ids))
print("done", tuple(out.shape) if isinstance(out, torch.Tensor) else tuple(out.logits.shape))
