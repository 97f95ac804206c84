


def forward(self, l_x_ : torch.Tensor, s77 : torch.SymInt, l_self_modules_fc1_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_fc1_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_fc2_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_fc2_parameters_bias_ : torch.nn.parameter.Parameter):
    linear = torch._C._nn.linear(l_x_, l_self_modules_fc1_parameters_weight_, l_self_modules_fc1_parameters_bias_);  l_x_ = l_self_modules_fc1_parameters_weight_ = l_self_modules_fc1_parameters_bias_ = None
    relu = torch.relu(linear);  linear = None
    linear_1 = torch._C._nn.linear(relu, l_self_modules_fc2_parameters_weight_, l_self_modules_fc2_parameters_bias_);  relu = l_self_modules_fc2_parameters_weight_ = l_self_modules_fc2_parameters_bias_ = None
    return linear_1
    