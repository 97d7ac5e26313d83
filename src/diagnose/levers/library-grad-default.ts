// A library whose inference entry point runs with gradients by default (issue 23: eval without no_grad). flair's
// transformer embeddings (TransformerDocumentEmbeddings, TransformerWordEmbeddings: fine_tune=True by default from flair
// 0.5 on) run the transformer under torch.enable_grad() while the embedding module is in training mode, which a newly
// made nn.Module is: every embed() outside flair's ModelTrainer keeps the transformer's graph on each vector it stores,
// so memory climbs sentence by sentence. Read from the fixed API names only (the class and its embed() call), and only
// where the paste shows no no_grad and no flair training (ModelTrainer / trainer.train / fine_tune() runs fine-tune on
// purpose). Bounded patterns, linear.
import type { Incident } from '../incident/index.js';

const FLAIR_TRANSFORMER = /\bTransformer(?:Document|Word)Embeddings\s{0,2}\(/;
const EMBED_CALL = /\.embed\s{0,2}\(/;
const FINE_TUNE_OFF = /\bfine_tune\s{0,2}=\s{0,2}False\b/;
const FLAIR_TRAINING = /\bModelTrainer\b|\btrainer\.(?:train|fine_tune)\s{0,2}\(/;

/** The flair class the paste builds its embeddings with, where it embeds outside flair's trainer with fine-tuning on. */
export function readFlairGradEmbed(text: string): string | undefined {
  const m = FLAIR_TRANSFORMER.exec(text);
  if (!m || !EMBED_CALL.test(text) || FINE_TUNE_OFF.test(text) || FLAIR_TRAINING.test(text)) return undefined;
  return m[0].replace(/\s{0,2}\($/, '');
}

export const LIBRARY_GRAD_CONDITIONS = {
  flair_embed_with_grad: ({ incident }: { incident: Incident }) => incident.eval.flairGradEmbed !== undefined && incident.eval.noGradShown === undefined,
};
