


def forward(self, attention_boundary_default, s77 : torch.SymInt, l_self_modules_out_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_out_parameters_bias_ : torch.nn.parameter.Parameter, l_x_ : torch.Tensor, l_self_modules_norm2_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_norm2_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_fc1_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_fc1_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_fc2_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_fc2_parameters_bias_ : torch.nn.parameter.Parameter):
    transpose = attention_boundary_default.transpose(1, 2);  attention_boundary_default = None
    reshape = transpose.reshape(s77, 16, 32);  transpose = s77 = None
    linear = torch._C._nn.linear(reshape, l_self_modules_out_parameters_weight_, l_self_modules_out_parameters_bias_);  reshape = l_self_modules_out_parameters_weight_ = l_self_modules_out_parameters_bias_ = None
    add = l_x_ + linear;  l_x_ = linear = None
    layer_norm = torch.nn.functional.layer_norm(add, (32,), l_self_modules_norm2_parameters_weight_, l_self_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_norm2_parameters_weight_ = l_self_modules_norm2_parameters_bias_ = None
    linear_1 = torch._C._nn.linear(layer_norm, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  layer_norm = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
    gelu = torch._C._nn.gelu(linear_1);  linear_1 = None
    linear_2 = torch._C._nn.linear(gelu, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  gelu = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
    add_1 = add + linear_2;  add = linear_2 = None
    return add_1
    