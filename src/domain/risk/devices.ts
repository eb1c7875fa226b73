// Files that are disks, memory or kernel switches: writing one overwrites data below any file system, or changes
// the running kernel at once (crash, reboot, power off, a device detached).
import type { Invocation } from './args.ts';
import { named, positionals, values } from './args.ts';
import type { Redirect } from './parse.ts';
import { writesFile } from './redirects.ts';

const DEVICES: readonly RegExp[] = [
  /^\/dev\/(sd|hd|vd|xvd)[a-z]+\d*$/,
  /^\/dev\/(nvme\d+n\d+(p\d+)?|nvme\d+|mmcblk\d+(p\d+)?|loop\d+|nbd\d+(p\d+)?|rbd\d+|zd\d+(p\d+)?|md\d+(p\d+)?|dm-\d+|sr\d+)$/,
  /^\/dev\/(md|mapper|disk|zvol|bcache|drbd)\//,
  /^\/dev\/(mem|kmem|port|nvram|watchdog\d*|cpu\/\d+\/msr)$/,
  // An LVM logical volume is /dev/<volume group>/<volume>; pve is Proxmox's own group.
  /^\/dev\/pve\//,
  /^\/proc\/sysrq-trigger$/,
  /^\/proc\/sys\/kernel\//,
  /^\/sys\/power\//,
  /^\/sys\/firmware\/efi\/efivars\//,
  /^\/sys\/.*\/(delete|remove|unbind|reset|online)$/,
];

/** True for a disk, memory or kernel-switch path, or a path under /dev/ only known at run time. */
export const isDevicePath = (path: string): boolean => DEVICES.some((d) => d.test(path));

function redirectsToDevice(redirect: Redirect): boolean {
  if (!writesFile(redirect)) return false;
  const { value, prefix } = redirect.target;
  return value === undefined ? /^\/dev\/[^/]*$/.test(prefix) && !/^\/dev\/(null|stdout|stderr|fd\/|tcp\/|udp\/)/.test(prefix) : isDevicePath(value);
}

/** The device a command writes: by redirection, or as tee's, cp's or dd's output. */
export function deviceWritten(inv: Invocation): string | undefined {
  const redirect = inv.redirects.find(redirectsToDevice);
  if (redirect !== undefined) return redirect.target.text;
  const of = values(inv).find((v) => v.startsWith('of=') && isDevicePath(v.slice(3)));
  if (named('dd')(inv) && of !== undefined) return of.slice(3);
  if (named('tee')(inv)) return positionals(inv).find((p) => p !== undefined && isDevicePath(p));
  if (named('cp', 'install', 'qemu-img', 'ddrescue')(inv)) {
    const target = positionals(inv).at(-1);
    return target !== undefined && isDevicePath(target) && positionals(inv).length > 1 ? target : undefined;
  }
  return undefined;
}
