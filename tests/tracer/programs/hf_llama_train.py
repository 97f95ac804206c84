"""A small Llama from a config (random weights, no network): training steps (forward with keyword tensors and
an attention mask, loss, backward, optimizer step) through ``torch.compile`` with Inductor, at two sequence
lengths. Prints the losses: what must not change under the tracer."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64, num_attention_heads=2,
                     num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)
model = LlamaForCausalLM(config)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
fwd = torch.compile(model)
for seq in (8, 8, 16):
    ids = torch.randint(0, 64, (2, seq))
    loss = fwd(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(seq, round(float(loss.detach()), 4))
