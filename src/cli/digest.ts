// `gpu-doctor digest`: filled in by the leak watch work (issue 5).
import { UsageError } from './usage.js';

export const digestCli = async (): Promise<number> => {
  throw new UsageError('digest is not available in this build yet');
};
