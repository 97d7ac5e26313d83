// One long input as a lever (issue 23): a video model keeps every frame of its clip on the card at once, a speech
// model the whole recording it is given in one pass. When the paste states a clip of many frames or a recording of
// minutes and no batch above 2, halving the batch cannot shorten the one input: process it in chunks (segments of
// frames, a VAE decoded in tiles or chunks, audio in 30 s windows) or lower its resolution. The length is read from
// the forms reports use: a frame count in prose or a setting ("1k-2k frames", "97 frames", "22帧", num_frames 97),
// a video's or a recording's duration ("an audio of 2 minute duration", "a 1 hour recording", "10 秒的视频").
// Pixel sizes stay levers/input-size.ts's (a stated size times its frames). Every pattern is bounded and linear.
import { staticOverCard } from './static-fit.js';
import { oomAfterSteps } from './progress.js';
import { LARGE_INPUT_PIXELS } from '../incident/input.js';
import type { Incident, InputPart, PhasePart } from '../incident/index.js';

export type InputLengthFacts = Pick<InputPart, 'inputLength' | 'inputLengthKind' | 'inputLengthSetting' | 'inputLengthNext'>;

const WINDOW = 512 * 1024;
/** A clip of this many frames and more: a video model's activations for it take gigabytes at any common resolution. */
export const LONG_CLIP_FRAMES = 64;
/** A video of this many seconds and more (30 fps: 300 frames) is a long clip too. */
const LONG_VIDEO_SECONDS = 10;
/** A recording of this many seconds and more goes through a speech model in more than one 30 s window. */
export const LONG_AUDIO_SECONDS = 60;
const SMALL_BATCH = 2;

const COUNT = String.raw`(\d{1,5}|\d{1,3}(?:\.\d)?[kK])`;
// "1k-2k frames", "97 frames", "between 1000 and 2000 frames" (the larger counts), "321帧", "num_frames: 97".
const FRAME_PROSE = new RegExp(String.raw`(?<![\w.])${COUNT}(?:[ \t]{0,2}(?:-|–|~|to|and)[ \t]{0,2}${COUNT})?[ \t]{0,2}(?:frames\b|帧)`, 'gi');
// The count after the noun, where a report says where the run stops working: "when I increase the frames more than 81",
// "frame count above 121", "帧数超过81" (a count stated as the threshold is the clip's length all the same).
const FRAME_THRESHOLD =
  /(?<![\w-])(?:frames?(?:[ \t]count|[ \t]number)?|num[-_ ]frames|帧数)[ \t]{0,2}(?:(?:is[ \t]|goes[ \t])?(?:more than|greater than|higher than|above|over|beyond|past|exceeds?|>)|超过|大于)[ \t]{0,2}(\d{2,5})(?!\w|\.\d)/gi;
const FRAME_SETTING =
  /(?<![\w-])(?:--)?(?:num[-_]frames|video[-_]length|n[-_]frames|num[-_]output[-_]frames|frames)['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}|[ \t]{1,3})(\d{1,5})(?!\w|\.\d)/gi;
const UNIT = String.raw`(seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|秒|分钟|小时)`;
const DURATION = String.raw`~?[ \t]?(\d{1,4}(?:\.\d{1,2})?)[ \t-]{0,2}${UNIT}(?![A-Za-z])`;
// "an audio of 2 minute duration", "2-minute audio", "a 1 hour recording", "videos are ~ 1 min long", "10秒的视频".
const AUDIO = String.raw`(?:audio|recording|speech|podcast|wav|mp3|flac|音频|录音)`;
// Before a duration only the nouns: "recording" and "clip" also name other things there (recording memory for 10
// minutes, the CLIP text encoder), so they count only after it ("a 1 hour recording").
const AUDIO_NOUN = String.raw`(?:audio|podcast|wav|mp3|flac|音频|录音)`;
const VIDEO = String.raw`(?:video|clip|mp4|视频)`;
const VIDEO_NOUN = String.raw`(?:video|mp4|视频)`;
const AUDIO_BEFORE = new RegExp(String.raw`\b${AUDIO_NOUN}\w{0,2}\b[^\n.,;]{0,24}?${DURATION}`, 'gi');
// An approximate duration reads the same: "5分钟左右的视频", "a 10 minute or so recording".
const ABOUT = String.raw`(?:[ \t]{0,2}(?:左右|上下|多|or[ \t]so))?`;
const AUDIO_AFTER = new RegExp(String.raw`${DURATION}${ABOUT}[ \t]{0,2}(?:long[ \t]{1,2}|的)?${AUDIO}`, 'gi');
const VIDEO_BEFORE = new RegExp(String.raw`\b${VIDEO_NOUN}\w{0,2}\b[^\n.,;]{0,24}?${DURATION}`, 'gi');
const VIDEO_AFTER = new RegExp(String.raw`${DURATION}${ABOUT}[ \t]{0,2}(?:long[ \t]{1,2}|的)?${VIDEO}`, 'gi');

const count = (v: string) => (/k$/i.test(v) ? Number(v.slice(0, -1)) * 1000 : Number(v));
function seconds(value: string, unit: string): number {
  const u = unit.toLowerCase();
  const n = Number(value);
  if (/^(?:h|hrs?|hours?|小时)$/.test(u)) return n * 3600;
  if (/^(?:mins?|minutes?|分钟)$/.test(u)) return n * 60;
  return n;
}

/** The longest clip (in frames) or recording (in seconds) the paste states, the text that states it and half of it. */
export function readInputLength(fullText: string): InputLengthFacts {
  const text = fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW);
  let frames: { n: number; quote: string } | undefined;
  for (const re of [FRAME_PROSE, FRAME_SETTING, FRAME_THRESHOLD]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const n = Math.max(count(m[1]), m[2] ? count(m[2]) : 0);
      if (n >= 2 && n <= 1_000_000 && (!frames || n > frames.n)) frames = { n, quote: m[0].trim() };
    }
  }
  const longest = (res: RegExp[]) => {
    let best: { s: number; quote: string } | undefined;
    for (const re of res) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        const s = seconds(m[1], m[2]);
        if (s > 0 && s <= 1e6 && (!best || s > best.s)) best = { s, quote: m[0].trim() };
      }
    }
    return best;
  };
  const audio = longest([AUDIO_BEFORE, AUDIO_AFTER]);
  const video = longest([VIDEO_BEFORE, VIDEO_AFTER]);
  if (frames && frames.n >= LONG_CLIP_FRAMES)
    return {
      inputLength: frames.n,
      inputLengthKind: 'frames',
      inputLengthSetting: frames.quote,
      inputLengthNext: String(Math.max(1, Math.floor(frames.n / 4))),
    };
  if (video && video.s >= LONG_VIDEO_SECONDS)
    return { inputLength: video.s, inputLengthKind: 'video', inputLengthSetting: video.quote, inputLengthNext: `${Math.max(1, Math.round(video.s / 4))} s` };
  if (audio && audio.s >= LONG_AUDIO_SECONDS)
    return { inputLength: audio.s, inputLengthKind: 'audio', inputLengthSetting: audio.quote, inputLengthNext: '30 s' };
  return {};
}

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
const INPUT_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward', 'generate']);

/**
 * One long clip or recording is the first lever: its length stated (LONG_CLIP_FRAMES frames, LONG_VIDEO_SECONDS of
 * video, LONG_AUDIO_SECONDS of audio), no large pixel size beside it (input_size_first answers that, with the frames
 * in its figure), no stated batch above 2, a phase that runs inputs, no growth, no steps done at these settings and a
 * static part that fits. Who holds the card is checked beside it (conditions.ts).
 */
export function inputLengthFirst(f: Incident): boolean {
  if (f.input.inputLength === undefined) return false;
  if (f.input.inputPixels !== undefined && f.input.inputPixels >= LARGE_INPUT_PIXELS) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return INPUT_PHASES.has(f.phase.name) && !grows(f) && !oomAfterSteps(f) && !staticOverCard(f);
}
