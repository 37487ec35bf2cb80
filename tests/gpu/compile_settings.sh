# Sourced by the GPU matrices (text_encoder_matrix.sh, flux_text_encoder_matrix.sh): the Torch
# Compile settings they run, by name, as sinter-runner flags.
declare -A compile_flags=(
  [off]=""
  [default]="--compile"
  [mano]="--compile --compile_mode max-autotune-no-cudagraphs"
  [ro]="--compile --compile_mode reduce-overhead"
  [ro-fullgraph]="--compile --compile_mode reduce-overhead --compile_fullgraph"
  [fp8_fast]="--compile --compile_mode reduce-overhead --compile_fullgraph --fp8_base --fp8_scaled --fp8_fast"
)
