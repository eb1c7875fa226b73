// The three risk classes, ordered by severity: a compound command takes the most severe class of its parts.

export const RISK_CLASSES = ['reversible_low', 'config_mutation', 'destructive'] as const;
export type RiskClass = (typeof RISK_CLASSES)[number];

export function severity(risk: RiskClass): number {
  return RISK_CLASSES.indexOf(risk);
}
