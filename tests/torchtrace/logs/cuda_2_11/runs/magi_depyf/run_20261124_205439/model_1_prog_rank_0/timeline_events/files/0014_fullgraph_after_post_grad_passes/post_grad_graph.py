class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[256][1]cuda:0", arg1_1: "f32[256][1]cuda:0", arg2_1: "f32[4, 16, 256][4096, 256, 1]cuda:0", arg3_1: "f32[1024, 256][256, 1]cuda:0", arg4_1: "f32[1024][1]cuda:0", arg5_1: "f32[256, 1024][1024, 1]cuda:0", arg6_1: "f32[256][1]cuda:0", arg7_1: "f32[4, 16][16, 1]cuda:0"):
        # File: /tmp/w/prog.py:19 in forward, code: h = self.fc2(torch.nn.functional.gelu(self.fc1(self.ln(x))))
        var_mean = torch.ops.aten.var_mean.correction(arg2_1, [2], correction = 0, keepdim = True)
        getitem: "f32[4, 16, 1][16, 1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[4, 16, 1][16, 1, 1]cuda:0" = var_mean[1];  var_mean = None
        sub: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.sub.Tensor(arg2_1, getitem_1);  getitem_1 = None
        add: "f32[4, 16, 1][16, 1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt: "f32[4, 16, 1][16, 1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add);  add = None
        mul: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = rsqrt = None
        mul_1: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul, arg0_1);  mul = arg0_1 = None
        add_1: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.add.Tensor(mul_1, arg1_1);  mul_1 = arg1_1 = None
        view: "f32[64, 256][256, 1]cuda:0" = torch.ops.aten.reshape.default(add_1, [64, 256]);  add_1 = None
        permute: "f32[256, 1024][1, 256]cuda:0" = torch.ops.aten.permute.default(arg3_1, [1, 0]);  arg3_1 = None
        mm_default_1: "f32[64, 1024][1024, 1]cuda:0" = torch.ops.aten.mm.default(view, permute);  view = permute = None
        add_tensor_1: "f32[64, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(arg4_1, mm_default_1);  arg4_1 = mm_default_1 = None
        view_1: "f32[4, 16, 1024][16384, 1024, 1]cuda:0" = torch.ops.aten.reshape.default(add_tensor_1, [4, 16, 1024]);  add_tensor_1 = None
        mul_2: "f32[4, 16, 1024][16384, 1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(view_1, 0.5)
        mul_3: "f32[4, 16, 1024][16384, 1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(view_1, 0.7071067811865476);  view_1 = None
        erf: "f32[4, 16, 1024][16384, 1024, 1]cuda:0" = torch.ops.aten.erf.default(mul_3);  mul_3 = None
        add_2: "f32[4, 16, 1024][16384, 1024, 1]cuda:0" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_4: "f32[4, 16, 1024][16384, 1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_2, add_2);  mul_2 = add_2 = None
        view_2: "f32[64, 1024][1024, 1]cuda:0" = torch.ops.aten.reshape.default(mul_4, [64, 1024]);  mul_4 = None
        permute_1: "f32[1024, 256][1, 1024]cuda:0" = torch.ops.aten.permute.default(arg5_1, [1, 0]);  arg5_1 = None
        mm_default: "f32[64, 256][256, 1]cuda:0" = torch.ops.aten.mm.default(view_2, permute_1);  view_2 = permute_1 = None
        add_tensor: "f32[64, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(arg6_1, mm_default);  arg6_1 = mm_default = None
        view_3: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.reshape.default(add_tensor, [4, 16, 256]);  add_tensor = None

        # File: /tmp/w/prog.py:21 in forward, code: h = h * mask.unsqueeze(-1)
        unsqueeze: "f32[4, 16, 1][16, 1, 1]cuda:0" = torch.ops.aten.unsqueeze.default(arg7_1, -1);  arg7_1 = None
        mul_5: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(view_3, unsqueeze);  view_3 = unsqueeze = None

        # File: /tmp/w/prog.py:22 in forward, code: return x + h
        add_3: "f32[4, 16, 256][4096, 256, 1]cuda:0" = torch.ops.aten.add.Tensor(arg2_1, mul_5);  arg2_1 = mul_5 = None
        return (add_3,)
