class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[512, 512][512, 1]cuda:0"):
        # File: /tmp/w/prog.py:60 in graphed, code: return (a.sin() * 2).cos()
        sin: "f32[512, 512][512, 1]cuda:0" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None
        mul: "f32[512, 512][512, 1]cuda:0" = torch.ops.aten.mul.Tensor(sin, 2);  sin = None
        cos: "f32[512, 512][512, 1]cuda:0" = torch.ops.aten.cos.default(mul);  mul = None
        return (cos,)
