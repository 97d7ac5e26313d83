// The config's host groups by their `source:`: `ssh` groups join the registry (see sshHostsOf), every
// other kind is a source that lists its own hosts, built here from its groups.
import type { Config } from '../config.js';
import { ConfigError } from '../core/config.js';
import { PrometheusHostSource } from '../sources/prometheus/hosts.js';
import type { HostSource } from './source.js';

/** The sources of the config's non-SSH host groups (none without such groups); a group the source refuses is a ConfigError. */
export function groupSources(config: Config): HostSource[] {
  try {
    const prometheus = PrometheusHostSource.fromConfig(config.host_groups.flatMap((g) => (g.source === 'prometheus' ? [g] : [])));
    return prometheus ? [prometheus] : [];
  } catch (e) {
    throw new ConfigError(`config is not valid:\n  ${(e as Error).message}`);
  }
}
