// Rule vocabulary shared by the engine (no zod here: the fast start path must not load it).
export const CATEGORIES = [
  'cuda_oom',
  'replica_oom',
  'fragmentation',
  'host_oom_killed',
  'shm_exhausted',
  'growing_memory_leak',
  'cudnn_cublas_alloc',
  'nccl_or_distributed',
  'driver_or_smi',
  'device_assert_not_memory',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** Fix generators implemented in src/diagnose/fixes/; a rule names them, the engine computes them. */
export const FIX_KINDS = [
  'reduce_batch',
  'fixed_autobatch',
  'reduce_workers',
  'reduce_imgsz',
  'expandable_segments',
  'free_other_processes',
  'empty_cache_after_validation',
  'release_graph_references',
  'drop_ram_cache',
  'shm_size',
  'absurd_request',
  'wrong_device',
  'nccl_lagging_rank',
  'nccl_first_collective',
  'advice',
] as const;
export type FixKind = (typeof FIX_KINDS)[number];

/** Conditions on extracted facts, implemented in src/diagnose/conditions.ts. */
export const CONDITIONS = [
  'fragmented',
  'not_fragmented',
  'absurd_request',
  'not_absurd_request',
  'capacity_contradicts_gpu',
  'other_process_holds_memory',
  'autobatch',
  'memory_series_grows',
  'memory_series_flat',
  'memory_series_unsettled',
  'host_growth_names_workers',
  'host_series_unsettled',
  'leak_grows_per_iteration',
  'leak_grows_between_epochs',
  'cache_not_emptied',
  'ranks_share_one_gpu',
  'ram_cache_incomplete',
  'holder_other_processes',
  'holder_not_capacity',
  'holder_weights',
  'holder_optimizer_state',
  'zero_below_3',
  'killed_loading_data',
  'ggml_buffer_numbers',
  'tool_tensorflow',
  'batch_change_no_help',
  'not_batch_change_no_help',
  'not_zero_below_3',
  'batch_is_the_lever',
  'batch_helps',
  'batch_unknown',
  'inference_tool',
  'tool_known',
  'weights_loading_incomplete',
  'kv_cache_numbers',
  'vllm_kv_needed',
  'vllm_weights_exceed_budget',
  'vllm_util_would_fit',
  'vllm_util_would_not_fit',
  'tool_unknown',
  'amp_would_help',
  'half_precision_on',
  'deepspeed_optimizer_init',
  'host_ram_weights',
  'holder_stated',
  'holder_unstated',
  'generating_untooled',
  'oom_after_epochs',
  'killed_while_loading',
  'weights_loading_killed',
  'not_oom_after_epochs',
  'phase_eval_gather',
  'phase_eval_hf',
  'phase_eval_lightning',
  'phase_eval_plain',
  'phase_eval_batch_said_fits',
  'phase_eval_batch_nograd',
  'phase_eval_hf_generate_batch',
  'phase_eval_plain_generates',
  'phase_eval_hf_accumulates',
  'phase_eval_hf_generate',
  'phase_eval_plain_nograd_shown',
  'phase_eval_plain_collects',
  'phase_eval_keras',
  'phase_eval_grads_stated',
  'phase_eval_whole_set',
  'phase_eval_batch_above_train',
  'phase_eval_batch_one_keras',
  'phase_eval_batch_one_torch',
  'phase_eval_one_large_input',
  'phase_eval_stated_input',
  'phase_eval_engine_input',
  'phase_eval_ultralytics',
  'eval_batch_halves',
  'oom_after_steps',
  'kept_reference_shown',
  'kept_reference_unshown',
  'batch_one_vision',
  'batch_one_experiment',
  'adapter_training',
  'not_adapter_training',
  'sequence_first',
  'input_size_first',
  'input_size_said',
  'input_length_first_video',
  'input_length_first_audio',
  'smaller_input_worked',
  'vae_decode_input',
  'amp_first',
  'pipeline_offload_first',
  'quantize_first_inference',
  'quantize_first_adapter',
  'quantize_not_enough',
  'generation_length_first',
  'serving_context_first',
  'batch_one_no_figures',
  'phase_load_dtype',
  'phase_checkpoint',
  'phase_collective',
  'phase_data',
  'batch_blocked_growth',
  'static_full_training_shard',
  'static_full_training_offload',
  'static_full_training_qlora',
  'checkpointing_first_offloaded',
  'batch_blocked_static',
  'ggml_cuda_weights',
  'tool_jax',
  'gpu_reading_jax_pool',
  'ggml_cuda_kv',
  'ggml_cuda_compute',
  'env_notebook',
  'not_env_notebook',
  'env_mps',
  'env_tpu',
  'not_env_tpu',
  'env_windows',
  'not_env_windows',
  'expandable_supported',
  'expandable_unsupported',
  'ray_memory_monitor',
  'static_fp32_weights',
  'ddp_marked_twice',
  'ddp_find_unused_already',
  'host_lever_unstated',
  'host_lever_unstated_workers_zero',
  'batch_one_static_dominates',
  'full_tune_static_first',
  'single_tensor_input',
  'checkpointing_worked',
  'batch_one_zero_below_3',
  'workers_evidence',
  'workers_first',
  'workers_not_lever_tried',
  'workers_not_lever_few',
  'host_kept_reference',
  'host_eval_gathered',
  'host_eval_killed',
  'host_ram_grows',
  'host_ram_grows_unquoted',
  'loader_collected',
  'worker_exit_in_container',
  'spawned_children',
  'env_wsl',
  // a non-PyTorch stack's own figures (levers/stack-levers.ts)
  'paddle_chunk_cap',
  'paddle_pool_full',
  'tf_weight_tensor',
  'trt_profile_batch',
  'trt_profile_unstated',
  'tf_tensor_over_limit',
  'vllm_weights_exceed_card_multi',
  'vllm_weights_exceed_card_single',
  // a cap the stack was given, not the card (levers/memory-cap.ts)
  'stack_cap_first',
  'vllm_share_low',
  'co_runtime_preallocates',
] as const;
export type Condition = (typeof CONDITIONS)[number];

export interface Fix {
  kind: FixKind;
  text?: string;
  /** The text in Simplified Chinese (same placeholders); a zh reply falls back to `text` without it. */
  zh?: { text: string };
  when?: Condition[];
  changes?: Record<string, number | string | boolean>;
}

export interface Rule {
  id: string;
  title: string;
  /** The title in Simplified Chinese; a zh reply falls back to `title` without it. */
  zh?: { title: string };
  category: Category;
  priority: number;
  description?: string;
  patterns: string[];
  requires?: string[];
  excludes?: string[];
  when?: Condition[];
  captures: string[];
  /** Recognition rule: the id of the rule whose conditions and fixes answer it (rule-base.ts resolves them). */
  answers?: string;
  fixes: Fix[];
  source: { seed?: string; issue?: string; note?: string };
}
