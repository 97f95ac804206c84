from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, attention_boundary_default: "f32[s77, 4, 16, 8]", s77: "Sym(s77)", l_self_modules_out_parameters_weight_: "f32[32, 32]", l_self_modules_out_parameters_bias_: "f32[32]", l_x_: "f32[s77, 16, 32]", l_self_modules_norm2_parameters_weight_: "f32[32]", l_self_modules_norm2_parameters_bias_: "f32[32]", l_self_modules_fc1_parameters_weight_: "f32[64, 32]", l_self_modules_fc1_parameters_bias_: "f32[64]", l_self_modules_fc2_parameters_weight_: "f32[32, 64]", l_self_modules_fc2_parameters_bias_: "f32[32]"):
        # File: /home/user/mc2026/tiny.py:44 in forward, code: y = attention_boundary(q, k, v).transpose(1, 2).reshape(b, s, d)
        transpose: "f32[s77, 16, 4, 8]" = attention_boundary_default.transpose(1, 2);  attention_boundary_default = None
        reshape: "f32[s77, 16, 32]" = transpose.reshape(s77, 16, 32);  transpose = s77 = None

        # File: /home/user/mc2026/tiny.py:45 in forward, code: x = x + self.out(y)
        linear: "f32[s77, 16, 32]" = torch._C._nn.linear(reshape, l_self_modules_out_parameters_weight_, l_self_modules_out_parameters_bias_);  reshape = l_self_modules_out_parameters_weight_ = l_self_modules_out_parameters_bias_ = None
        add: "f32[s77, 16, 32]" = l_x_ + linear;  l_x_ = linear = None

        # File: /home/user/mc2026/tiny.py:46 in forward, code: return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        layer_norm: "f32[s77, 16, 32]" = torch.nn.functional.layer_norm(add, (32,), l_self_modules_norm2_parameters_weight_, l_self_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_norm2_parameters_weight_ = l_self_modules_norm2_parameters_bias_ = None
        linear_1: "f32[s77, 16, 64]" = torch._C._nn.linear(layer_norm, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  layer_norm = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
        gelu: "f32[s77, 16, 64]" = torch._C._nn.gelu(linear_1);  linear_1 = None
        linear_2: "f32[s77, 16, 32]" = torch._C._nn.linear(gelu, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  gelu = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
        add_1: "f32[s77, 16, 32]" = add + linear_2;  add = linear_2 = None
        return add_1
