"""Sequence-length recompiles on keyword tensors: input_ids and attention_mask of lengths 3..6."""
import torch

torch._dynamo.config.automatic_dynamic_shapes = False


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(16, 4)

    def forward(self, **kwargs):
        h = self.emb(kwargs["input_ids"]) * kwargs["attention_mask"].unsqueeze(-1)
        return h.sum(1)


m = torch.compile(M(), backend="eager")
for n in range(3, 7):
    ids = torch.arange(n).remainder(16).unsqueeze(0)
    print(m(input_ids=ids, attention_mask=torch.ones(1, n)).tolist())
