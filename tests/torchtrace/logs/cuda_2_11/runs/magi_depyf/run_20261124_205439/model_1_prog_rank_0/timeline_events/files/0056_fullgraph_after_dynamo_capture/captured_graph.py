class GraphModule(torch.nn.Module):
    def forward(self, L_a_: "f32[512, 512][512, 1]cuda:0"):
        l_a_ = L_a_

        # File: /tmp/w/prog.py:60 in graphed, code: return (a.sin() * 2).cos()
        sin: "f32[512, 512][512, 1]cuda:0" = l_a_.sin();  l_a_ = None
        mul: "f32[512, 512][512, 1]cuda:0" = sin * 2;  sin = None
        cos: "f32[512, 512][512, 1]cuda:0" = mul.cos();  mul = None
        return (cos,)
