// prom-client metrics. One Registry per process (not the global one), so tests can make several.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly commands = new Counter({
    name: 'gpu_doctor_commands_total',
    help: 'Commands served',
    labelNames: ['platform', 'command', 'outcome'],
    registers: [this.registry],
  });
  readonly commandSeconds = new Histogram({
    name: 'gpu_doctor_command_duration_seconds',
    help: 'Command latency',
    labelNames: ['platform', 'command'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly ackSeconds = new Histogram({
    name: 'gpu_doctor_ack_seconds',
    help: 'Time from a slash command arriving to its ack',
    labelNames: ['platform'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly ruleHits = new Counter({ name: 'gpu_doctor_rule_hits_total', help: 'Diagnoses by rule', labelNames: ['rule'], registers: [this.registry] });
  readonly sshExecSeconds = new Histogram({
    name: 'gpu_doctor_ssh_exec_seconds',
    help: 'SSH exec latency per host',
    labelNames: ['host'],
    registers: [this.registry],
  });
  readonly sshErrors = new Counter({ name: 'gpu_doctor_ssh_errors_total', help: 'SSH errors per host', labelNames: ['host'], registers: [this.registry] });
  readonly adapterUp = new Gauge({
    name: 'gpu_doctor_adapter_connected',
    help: '1 when the chat adapter is connected',
    labelNames: ['adapter'],
    registers: [this.registry],
  });

  constructor(defaults = false) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }
}
