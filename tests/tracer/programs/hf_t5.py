"""A T5 encoder-decoder from a config (random weights, no network): a seq2seq training step (keyword tensors,
labels, backward) compiled with aot_eager, then greedy decoding by hand through the compiled model. Prints
the losses and tokens: what must not change under the tracer."""

import torch
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
config = T5Config(vocab_size=64, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2,
                  decoder_start_token_id=0, pad_token_id=0)
model = T5ForConditionalGeneration(config)
fwd = torch.compile(model, backend="aot_eager")
ids = torch.randint(1, 64, (2, 8))
labels = torch.randint(1, 64, (2, 6))
out = fwd(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels)
out.loss.backward()
print("loss", round(float(out.loss.detach()), 4))
model.eval()
with torch.no_grad():
    dec = torch.zeros((2, 1), dtype=torch.long)
    for _ in range(3):
        logits = fwd(input_ids=ids, attention_mask=torch.ones_like(ids), decoder_input_ids=dec).logits
        dec = torch.cat([dec, logits[:, -1:].argmax(-1)], dim=1)
print("tokens", dec.tolist())
