from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, l_self_modules_norm1_eps: "f64[]", l_x_: "f32[s77, 16, 32]", s77: "Sym(s77)", l_self_modules_norm1_parameters_weight_: "f32[32]", l_self_modules_norm1_parameters_bias_: "f32[32]", l_self_modules_qkv_parameters_weight_: "f32[96, 32]", l_self_modules_qkv_parameters_bias_: "f32[96]"):
        # File: /home/user/mc2026/tiny.py:40 in forward, code: q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        item: "Sym(0.0000100000000000000)" = l_self_modules_norm1_eps.item();  l_self_modules_norm1_eps = None
        layer_norm: "f32[s77, 16, 32]" = torch.nn.functional.layer_norm(l_x_, (32,), l_self_modules_norm1_parameters_weight_, l_self_modules_norm1_parameters_bias_, item);  l_x_ = l_self_modules_norm1_parameters_weight_ = l_self_modules_norm1_parameters_bias_ = item = None
        linear: "f32[s77, 16, 96]" = torch._C._nn.linear(layer_norm, l_self_modules_qkv_parameters_weight_, l_self_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_qkv_parameters_weight_ = l_self_modules_qkv_parameters_bias_ = None
        chunk = linear.chunk(3, dim = -1);  linear = None
        getitem: "f32[s77, 16, 32]" = chunk[0]
        getitem_1: "f32[s77, 16, 32]" = chunk[1]
        getitem_2: "f32[s77, 16, 32]" = chunk[2];  chunk = None

        # File: /home/user/mc2026/tiny.py:41 in forward, code: q = q.view(b, s, self.heads, self.hd).transpose(1, 2)
        view: "f32[s77, 16, 4, 8]" = getitem.view(s77, 16, 4, 8);  getitem = None
        transpose: "f32[s77, 4, 16, 8]" = view.transpose(1, 2);  view = None

        # File: /home/user/mc2026/tiny.py:42 in forward, code: k = k.view(b, s, self.heads, self.hd).transpose(1, 2)
        view_1: "f32[s77, 16, 4, 8]" = getitem_1.view(s77, 16, 4, 8);  getitem_1 = None
        transpose_1: "f32[s77, 4, 16, 8]" = view_1.transpose(1, 2);  view_1 = None

        # File: /home/user/mc2026/tiny.py:43 in forward, code: v = v.view(b, s, self.heads, self.hd).transpose(1, 2)
        view_2: "f32[s77, 16, 4, 8]" = getitem_2.view(s77, 16, 4, 8);  getitem_2 = s77 = None
        transpose_2: "f32[s77, 4, 16, 8]" = view_2.transpose(1, 2);  view_2 = None
        return (transpose, transpose_1, transpose_2)
