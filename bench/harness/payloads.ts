/** Bodies the bench sends: realistic sizes and content, as a citizen-request app sends them. */

/** An intake request with coordinates (no geocoding) and no attachment (interface 2.5). */
export function intakeBody(protocolNumber: string): Record<string, unknown> {
  return {
    protocolNumber,
    assetType: 'POLE',
    requestedAt: new Date(Date.now() - 5 * 60_000).toISOString(),
    requester: { name: 'Maria Aparecida dos Santos', phone: '+5511987654321' },
    lampType: 'LED',
    reasonCode: 'LAMPADA_APAGADA',
    address: {
      street: 'Rua Augusta',
      number: '1500',
      neighborhood: 'Consolação',
      reference: 'Em frente à padaria',
      latitude: -23.5558,
      longitude: -46.6623,
    },
    problem: { description: 'Lâmpada apagada há três noites', additionalNotes: 'Poste com fiação exposta' },
  };
}
