// The inventory file's format as `nomos fleet import --help` and its errors show it (README: Fleet), apart so
// that the help loads nothing else.

/** The documented format, for --help and for errors about the file's shape. */
export const FLEET_FILE_FORMAT = `entities:                     # or a bare list of entities
  - slug: host:pve1           # host:NAME, lxc:NAME or vm:NAME; type follows from it
    ssh: root@192.168.1.10:22 # or {host, port: 22, user: root, host_key: "ssh-ed25519 AAAA…"}
  - slug: lxc:web
    parent: host:pve1         # containers and VMs: their host and Proxmox id
    pve_id: 101
    attributes: {role: web}   # optional, on any entity; so is state: provisioning|active|destroyed`;
