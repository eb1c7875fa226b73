// What the notifier sends: each kind at most once per event and channel.
export const NOTIFICATION_KINDS = ['approval_requested', 'approval_expiring', 'turn_failed', 'execution_hung'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
