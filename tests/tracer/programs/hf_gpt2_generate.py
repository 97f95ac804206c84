"""A GPT-2 from a config (random weights, no network), compiled with ``model.compile()`` (aot_eager) and run
through ``generate()`` (greedy, a KV cache that grows a token a step: new lengths each call). Prints the
tokens: what must not change under the tracer."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(vocab_size=64, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
                    eos_token_id=1, pad_token_id=1)
model = GPT2LMHeadModel(config).eval()
model.compile(backend="aot_eager")
ids = torch.randint(2, 64, (1, 6))
with torch.no_grad():
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False,
                         min_new_tokens=4)
print("tokens", out.tolist())
