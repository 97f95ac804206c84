"""A small Llama from a config (random weights, no network): two training steps (forward, loss, backward,
optimizer step) at two sequence lengths, compiled with aot_eager and called with keyword tensors."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=2,
                     num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)
model = LlamaForCausalLM(config)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
fwd = torch.compile(model, backend="aot_eager")
for seq in (8, 16):
    ids = torch.randint(0, 64, (2, seq))
    loss = fwd(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
print("done", float(loss))
