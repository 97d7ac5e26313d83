// Wires the pieces together: config, rule base, services, command registry. Adapters get the result.
import { loadConfig, type LoadedConfig } from './core/config.js';
import { CommandRegistry } from './core/registry.js';
import type { Services } from './core/services.js';
import { loadRuleBase } from './diagnose/rule-base.js';
import { allCommands } from '../commands/index.js';

export interface App {
  loaded: LoadedConfig;
  services: Services;
  registry: CommandRegistry;
  close(): Promise<void>;
}

export async function createApp(configFile?: string): Promise<App> {
  const loaded = loadConfig(configFile);
  const services: Services = { rules: await loadRuleBase() };
  const closers: (() => Promise<void> | void)[] = [];
  const { createHostsService } = await import('./hosts/service.js');
  const hosts = createHostsService(loaded.config, loaded.baseDir);
  services.hosts = hosts;
  closers.push(() => hosts.close());
  const registry = new CommandRegistry(allCommands());
  return {
    loaded,
    services,
    registry,
    async close() {
      for (const c of closers.reverse()) await c();
    },
  };
}
