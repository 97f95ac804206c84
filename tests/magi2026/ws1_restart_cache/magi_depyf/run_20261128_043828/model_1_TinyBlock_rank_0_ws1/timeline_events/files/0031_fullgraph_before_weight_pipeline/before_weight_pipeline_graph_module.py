from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, s77: "Sym(s77)", L_x_: "f32[s77, 16, 32]", L_self_modules_norm1_parameters_weight_: "f32[32]", L_self_modules_norm1_parameters_bias_: "f32[32]", L_self_modules_qkv_parameters_weight_: "f32[96, 32]", L_self_modules_qkv_parameters_bias_: "f32[96]", L_self_modules_out_parameters_weight_: "f32[32, 32]", L_self_modules_out_parameters_bias_: "f32[32]", L_self_modules_norm2_parameters_weight_: "f32[32]", L_self_modules_norm2_parameters_bias_: "f32[32]", L_self_modules_fc1_parameters_weight_: "f32[64, 32]", L_self_modules_fc1_parameters_bias_: "f32[64]", L_self_modules_fc2_parameters_weight_: "f32[32, 64]", L_self_modules_fc2_parameters_bias_: "f32[32]"):
        l_x_ = L_x_
        l_self_modules_norm1_parameters_weight_ = L_self_modules_norm1_parameters_weight_
        l_self_modules_norm1_parameters_bias_ = L_self_modules_norm1_parameters_bias_
        l_self_modules_qkv_parameters_weight_ = L_self_modules_qkv_parameters_weight_
        l_self_modules_qkv_parameters_bias_ = L_self_modules_qkv_parameters_bias_
        l_self_modules_out_parameters_weight_ = L_self_modules_out_parameters_weight_
        l_self_modules_out_parameters_bias_ = L_self_modules_out_parameters_bias_
        l_self_modules_norm2_parameters_weight_ = L_self_modules_norm2_parameters_weight_
        l_self_modules_norm2_parameters_bias_ = L_self_modules_norm2_parameters_bias_
        l_self_modules_fc1_parameters_weight_ = L_self_modules_fc1_parameters_weight_
        l_self_modules_fc1_parameters_bias_ = L_self_modules_fc1_parameters_bias_
        l_self_modules_fc2_parameters_weight_ = L_self_modules_fc2_parameters_weight_
        l_self_modules_fc2_parameters_bias_ = L_self_modules_fc2_parameters_bias_

        # File: /home/user/mc2026/tiny.py:40 in forward, code: q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        layer_norm: "f32[s77, 16, 32]" = torch.nn.functional.layer_norm(l_x_, (32,), l_self_modules_norm1_parameters_weight_, l_self_modules_norm1_parameters_bias_, 1e-05);  l_self_modules_norm1_parameters_weight_ = l_self_modules_norm1_parameters_bias_ = None
        linear: "f32[s77, 16, 96]" = torch._C._nn.linear(layer_norm, l_self_modules_qkv_parameters_weight_, l_self_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_qkv_parameters_weight_ = l_self_modules_qkv_parameters_bias_ = None
        chunk = linear.chunk(3, dim = -1);  linear = None
        q: "f32[s77, 16, 32]" = chunk[0]
        k: "f32[s77, 16, 32]" = chunk[1]
        v: "f32[s77, 16, 32]" = chunk[2];  chunk = None

        # File: /home/user/mc2026/tiny.py:41 in forward, code: q = q.view(b, s, self.heads, self.hd).transpose(1, 2)
        view: "f32[s77, 16, 4, 8]" = q.view(s77, 16, 4, 8);  q = None
        q_1: "f32[s77, 4, 16, 8]" = view.transpose(1, 2);  view = None

        # File: /home/user/mc2026/tiny.py:42 in forward, code: k = k.view(b, s, self.heads, self.hd).transpose(1, 2)
        view_1: "f32[s77, 16, 4, 8]" = k.view(s77, 16, 4, 8);  k = None
        k_1: "f32[s77, 4, 16, 8]" = view_1.transpose(1, 2);  view_1 = None

        # File: /home/user/mc2026/tiny.py:43 in forward, code: v = v.view(b, s, self.heads, self.hd).transpose(1, 2)
        view_2: "f32[s77, 16, 4, 8]" = v.view(s77, 16, 4, 8);  v = None
        v_1: "f32[s77, 4, 16, 8]" = view_2.transpose(1, 2);  view_2 = None

        # File: /home/user/mc2026/tiny.py:44 in forward, code: y = attention_boundary(q, k, v).transpose(1, 2).reshape(b, s, d)
        attention_boundary_default: "f32[s77, 4, 16, 8]" = torch.ops.mc_demo.attention_boundary.default(q_1, k_1, v_1);  q_1 = k_1 = v_1 = None
        transpose_3: "f32[s77, 16, 4, 8]" = attention_boundary_default.transpose(1, 2);  attention_boundary_default = None
        y: "f32[s77, 16, 32]" = transpose_3.reshape(s77, 16, 32);  transpose_3 = s77 = None

        # File: /home/user/mc2026/tiny.py:45 in forward, code: x = x + self.out(y)
        linear_1: "f32[s77, 16, 32]" = torch._C._nn.linear(y, l_self_modules_out_parameters_weight_, l_self_modules_out_parameters_bias_);  y = l_self_modules_out_parameters_weight_ = l_self_modules_out_parameters_bias_ = None
        x: "f32[s77, 16, 32]" = l_x_ + linear_1;  l_x_ = linear_1 = None

        # File: /home/user/mc2026/tiny.py:46 in forward, code: return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        layer_norm_1: "f32[s77, 16, 32]" = torch.nn.functional.layer_norm(x, (32,), l_self_modules_norm2_parameters_weight_, l_self_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_norm2_parameters_weight_ = l_self_modules_norm2_parameters_bias_ = None
        linear_2: "f32[s77, 16, 64]" = torch._C._nn.linear(layer_norm_1, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  layer_norm_1 = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
        gelu: "f32[s77, 16, 64]" = torch._C._nn.gelu(linear_2);  linear_2 = None
        linear_3: "f32[s77, 16, 32]" = torch._C._nn.linear(gelu, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  gelu = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
        add_1: "f32[s77, 16, 32]" = x + linear_3;  x = linear_3 = None
        return (add_1,)
