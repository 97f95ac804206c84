"""A diffusers UNet2DConditionModel from a config (random weights, no network), compiled with aot_eager and
called as a denoising loop calls it (latents, a timestep, encoder hidden states as keywords) for two steps.
Prints a checksum of the output: what must not change under the tracer."""

import torch
from diffusers import UNet2DConditionModel

torch.manual_seed(0)
unet = UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
                            block_out_channels=(32, 32), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                            up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
                            attention_head_dim=8, norm_num_groups=8).eval()
fwd = torch.compile(unet, backend="aot_eager")
latents = torch.randn(1, 4, 8, 8)
text = torch.randn(1, 4, 32)
with torch.no_grad():
    for t in (10, 5):
        noise = fwd(latents, timestep=torch.tensor(t), encoder_hidden_states=text, return_dict=False)[0]
        latents = latents - 0.1 * noise
print("sum", round(float(latents.sum()), 3), tuple(latents.shape))
