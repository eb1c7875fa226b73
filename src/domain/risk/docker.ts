// The container tools that share docker's command line (podman, nerdctl, the compose front ends).
import { named } from './args.ts';

export const isContainerTool = named('docker', 'docker-compose', 'podman', 'podman-compose', 'nerdctl');

/** The stand-alone compose tools, whose first operand is the compose action itself. */
export const isComposeTool = named('docker-compose', 'podman-compose');

/** Global options that take a value, so the value is never read as the sub-command. */
export const DOCKER_VALUED = ['-H', '--host', '-c', '--context', '--config', '-l', '--log-level', '-f', '--file', '-p', '--project-name', '--project-directory', '--env-file', '--profile'];
