"""A small GPT-2 from a config (random weights, no network), compiled and called with keyword tensors at
three sequence lengths, as Hugging Face users do: the second length recompiles on input_ids dim 1."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=64)
model = GPT2LMHeadModel(config).eval()
fn = torch.compile(model, backend="eager")
with torch.no_grad():
    for seq in (8, 12, 16):
        ids = torch.arange(2 * seq).remainder(64).reshape(2, seq)
        out = fn(input_ids=ids, attention_mask=torch.ones_like(ids))
        print(seq, round(out.logits.float().sum().item(), 4), round(out.logits.abs().mean().item(), 6))
