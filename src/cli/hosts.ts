// `gpu-doctor status|mem|hosts`: filled in by the hosts work (issue 3).
import { UsageError } from './usage.js';

const notYet = async (): Promise<number> => {
  throw new UsageError('host commands are not available in this build yet');
};
export const statusCli = notYet;
export const memCli = notYet;
export const hostsCli = notYet;
