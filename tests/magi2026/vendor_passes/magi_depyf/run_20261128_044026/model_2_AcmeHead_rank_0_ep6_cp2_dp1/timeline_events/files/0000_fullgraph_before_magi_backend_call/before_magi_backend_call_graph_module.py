from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_fc1_parameters_weight_: "f32[64, 32]", L_self_modules_fc1_parameters_bias_: "f32[64]", s77: "Sym(s77)", L_x_: "f32[s77, 32]", L_self_modules_fc2_parameters_weight_: "f32[8, 64]", L_self_modules_fc2_parameters_bias_: "f32[8]"):
        l_self_modules_fc1_parameters_weight_ = L_self_modules_fc1_parameters_weight_
        l_self_modules_fc1_parameters_bias_ = L_self_modules_fc1_parameters_bias_
        l_x_ = L_x_
        l_self_modules_fc2_parameters_weight_ = L_self_modules_fc2_parameters_weight_
        l_self_modules_fc2_parameters_bias_ = L_self_modules_fc2_parameters_bias_

        # File: /home/user/mc2026/vendor.py:65 in forward, code: return self.fc2(torch.relu(self.fc1(x)))
        linear: "f32[s77, 64]" = torch._C._nn.linear(l_x_, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  l_x_ = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
        relu: "f32[s77, 64]" = torch.relu(linear);  linear = None
        linear_1: "f32[s77, 8]" = torch._C._nn.linear(relu, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  relu = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
        return (linear_1,)
