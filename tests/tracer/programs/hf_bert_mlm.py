"""A BERT masked-LM from a config (random weights, no network), called as users call it: keyword tensors,
an attention mask, ``output_hidden_states`` / ``output_attentions`` (transformers' output-capturing hooks),
``return_dict``, then a training step (loss, backward). ``BERT_COMPILE`` picks how it is compiled:
``fn`` (``torch.compile(model)``), ``method`` (``model.compile()``), ``dynamic`` (``dynamic=True``),
``autotune`` (Inductor, ``mode="max-autotune-no-cudagraphs"``), ``overhead`` (``mode="reduce-overhead"``);
``BERT_BACKEND`` the backend (default inductor). Prints the losses: what must not change under the tracer."""

import os

import torch
from transformers import BertConfig, BertForMaskedLM

torch.manual_seed(0)
config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64)
model = BertForMaskedLM(config)
how = os.environ.get("BERT_COMPILE", "fn")
backend = os.environ.get("BERT_BACKEND", "inductor")
kw = {"backend": backend}
if how == "dynamic":
    kw["dynamic"] = True
elif how == "autotune":
    kw["mode"] = "max-autotune-no-cudagraphs"
elif how == "overhead":
    kw["mode"] = "reduce-overhead"
if how == "method":
    model.compile(**kw)
    fwd = model
else:
    fwd = torch.compile(model, **kw)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step, seq in enumerate((8, 8, 12)):
    ids = torch.randint(0, 64, (2, seq))
    mask = torch.ones_like(ids)
    mask[:, -2:] = 0
    labels = ids.clone()
    labels[:, ::2] = -100
    out = fwd(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids), labels=labels,
              output_hidden_states=True, output_attentions=step == 1, return_dict=True)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(step, len(out.hidden_states), round(float(out.loss), 4))
with torch.no_grad():
    out = fwd(input_ids=ids, attention_mask=mask, return_dict=False)
print("eval", tuple(out[0].shape))
