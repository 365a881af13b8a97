/**
 * The operator's words for what the API records in its own terms: audit actions, the
 * kinds of object, who did something, the fields of a before/after, timeline entries,
 * event types and delivery outcomes. Part of the message catalogue (i18n.ts spreads
 * these tables into it), so the console never shows `service-order.complete`,
 * `OPEN -> ASSIGNED` or `admin-token:desk`.
 */
import type { types } from './api.js';

export const WORDS_PT = {
  'action.admin-token.create': 'Token de acesso criado',
  'action.admin-token.revoke': 'Token de acesso revogado',
  'action.alert.create-order': 'Ordem de serviço criada a partir do alerta',
  'action.alert.discard': 'Alerta descartado',
  'action.alert.link': 'Alerta vinculado a uma ordem',
  'action.alert.reclassify': 'Motivo do alerta alterado',
  'action.alert.set-location': 'Localização do alerta definida',
  'action.attachment.dismiss': 'Foto com falha dispensada',
  'action.attachment.retry': 'Download da foto tentado de novo',
  'action.inbound.dismiss': 'Pedido recusado dispensado',
  'action.inbound.retry': 'Pedido recusado tentado de novo',
  'action.operator.create': 'Operador criado',
  'action.operator.set-password': 'Senha do operador definida',
  'action.operator.reset-password': 'Senha do operador redefinida pelo Lumen',
  'action.operator.disable': 'Operador desativado',
  'action.operator.enable': 'Operador reativado',
  'action.operator.grant': 'Papel concedido',
  'action.operator.revoke': 'Papel retirado',
  'action.operator.platform-admin': 'Administração da plataforma alterada',
  'action.partner.create': 'Parceiro cadastrado',
  'action.partner.poll-now': 'Consulta ao parceiro pedida',
  'action.partner.rotate-key': 'Chave de API trocada',
  'action.partner.rotate-secret': 'Segredo do webhook trocado',
  'action.partner.update': 'Configuração do parceiro alterada',
  'action.reason.apply-mapping': 'Mapeamento de motivo aplicado aos pendentes',
  'action.reason.create': 'Motivo criado',
  'action.reason.map': 'Código do parceiro mapeado',
  'action.reason.unmap': 'Mapeamento de código removido',
  'action.service-order.assign': 'Ordem atribuída a uma equipe',
  'action.service-order.start': 'Ordem iniciada',
  'action.service-order.complete': 'Ordem concluída',
  'action.service-order.cancel': 'Ordem cancelada',
  'action.service-order.set-pole': 'Poste da ordem definido',
  'action.session.password-refused': 'Troca de senha recusada',
  'action.session.sign-in': 'Entrada no console',
  'action.session.sign-in-failed': 'Tentativa de entrada recusada',
  'action.session.sign-out': 'Saída do console',
  'action.team.create': 'Equipe criada',
  'action.team.member-add': 'Membro incluído na equipe',
  'action.team.member-remove': 'Membro retirado da equipe',
  'action.service-order.plan-visit': 'Visita planejada',
  'action.service-order.clear-visit': 'Visita planejada removida',
  'action.tenant.create': 'Cidade cadastrada',
  'action.tenant.lamp-out-policy': 'Regra de lâmpada apagada alterada',
  'action.tenant.set-alert-grouping': 'Agrupamento de alertas alterado',
  'action.tenant.set-extent': 'Área da cidade alterada',
  'action.tenant.set-intake': 'Modo de entrada alterado',
  'action.webhook.redeliver': 'Evento reenviado ao parceiro',
  'action.webhook.redeliver-dead': 'Entregas que desistiram reenviadas',
  'action.webhook.redeliver-since': 'Eventos reenviados desde uma data',
  'action.webhook.test-event': 'Evento de teste enviado',
  'action.other': 'Ação registrada',
  'entity.alert': 'Alerta',
  'entity.service_order': 'Ordem de serviço',
  'entity.partner': 'Parceiro',
  'entity.team': 'Equipe',
  'entity.tenant': 'Cidade',
  'entity.admin_token': 'Token de acesso',
  'entity.operator': 'Operador',
  'actor.intake': 'Recebido do parceiro',
  'actor.lumen': 'Lumen (automático)',
  'actor.token': 'token {name}',
  'actor.cli': 'linha de comando ({name})',
  'actor.partner': 'parceiro {name}',
  'actor.sandbox': 'parceiro {name} (teste)',
  'field.status': 'Situação',
  'field.serviceOrderId': 'Ordem de serviço',
  'field.reasonCode': 'Motivo',
  'field.priority': 'Prioridade',
  'field.slaDueAt': 'Prazo',
  'field.latitude': 'Latitude',
  'field.longitude': 'Longitude',
  'field.locationSource': 'Origem da localização',
  'field.cancelReason': 'Motivo do descarte',
  'field.number': 'Número',
  'field.teamId': 'Equipe',
  'field.closedAt': 'Encerrada em',
  'field.alerts': 'Alertas',
  'field.keyPrefix': 'Chave de API',
  'field.previousKeyExpiresAt': 'Chave anterior funciona até',
  'field.previousWebhookSecretUntil': 'Segredo anterior assina até',
  'field.intakePolicy': 'Modo de entrada',
  'field.extent': 'Área da cidade',
  'field.extentSource': 'Origem da área',
  'field.locationCheckMeters': 'Distância máxima de um poste',
  'field.duplicateRadiusMeters': 'Distância para duplicados',
  'field.duplicateWindowHours': 'Janela para duplicados',
  'field.supplyFaultRadiusMeters': 'Distância para falha de alimentação',
  'field.supplyFaultWindowMinutes': 'Janela para falha de alimentação',
  'field.enabled': 'Ativo',
  'field.scopes': 'Permissões',
  'field.webhookUrl': 'URL do webhook',
  'field.transport': 'Entrega de eventos',
  'field.rateLimitPerMinute': 'Limite por minuto',
  'field.poleId': 'Poste',
  'field.role': 'Papel',
  'field.reason': 'Nota para o parceiro',
  'field.note': 'Nota',
  'field.name': 'Nome',
  'field.email': 'E-mail',
  'field.code': 'Código',
  'field.namePt': 'Nome em português',
  'field.nameEn': 'Nome em inglês',
  'field.slaHours': 'Prazo em horas',
  'field.password': 'Senha',
  'field.webhookSecret': 'Segredo do webhook',
  'field.text': 'Busca',
  'field.north': 'Norte',
  'field.south': 'Sul',
  'field.east': 'Leste',
  'field.west': 'Oeste',
  'field.serviceOrderNumber': 'Número da ordem',
  'field.serviceOrder': 'Ordem de serviço',
  'field.signature': 'Assinatura dos webhooks',
  'field.createdAt': 'Criado em',
  'field.updatedAt': 'Alterado em',
  'field.webhookSecretSet': 'Segredo do webhook definido',
  'field.pollingUrl': 'Endereço de consulta',
  'field.pollingKeySet': 'Chave de consulta definida',
  'field.pollingIntervalSeconds': 'Intervalo de consulta (s)',
  'field.eventTypes': 'Tipos de evento',
  'field.eventsMinIntervalSeconds': 'Intervalo mínimo de eventos (s)',
  'field.previousKey': 'Chave anterior',
  'field.grants': 'Papéis',
  'field.platformAdmin': 'Administração da plataforma',
  'field.count': 'Entregas',
  'field.eventId': 'Evento',
  'field.deliveryId': 'Entrega',
  'field.redeliveryOf': 'Reenvio da entrega',
  'field.since': 'Desde',
  'field.partnerCode': 'Código do parceiro',
  'field.reclassified': 'Alertas reclassificados',
  'field.active': 'Ativo',
  'field.accepted': 'Aceito',
  'field.stored': 'Guardada',
  'field.url': 'Endereço',
  'field.kind': 'Tipo',
  'field.wattage': 'Potência (W)',
  'field.materialId': 'Material',
  'field.operatorId': 'Operador',
  'field.sessionId': 'Sessão',
  'field.attachmentId': 'Foto',
  'field.itemId': 'Item recebido',
  'field.failureId': 'Falha',
  'field.errorCode': 'Erro',
  'field.problemCode': 'Problema',
  'field.protocolNumber': 'Protocolo',
  'field.startsAt': 'Início',
  'field.endsAt': 'Fim',
  'field.ibgeCode': 'Código IBGE',
  'field.sandbox': 'Cidade de testes',
  'value.signature.both': 'as duas (Standard Webhooks e Lumen)',
  'value.signature.standard': 'Standard Webhooks',
  'value.signature.lumen': 'Lumen',
  'field.other': 'Outro dado',
  'value.set': 'definido',
  'value.none': 'nenhum',
  'value.yes': 'sim',
  'value.no': 'não',
  'value.alerts.one': '1 alerta',
  'value.alerts.other': '{count} alertas',
  'locationSource.payload': 'informada pelo parceiro',
  'locationSource.poles': 'pelos postes da cidade',
  'locationSource.geocoder': 'pelo geocodificador',
  'locationSource.operator': 'definida por um operador',
  'timeline.kind.status': 'situação',
  'timeline.kind.audit': 'ação',
  'timeline.kind.event': 'evento',
  'timeline.kind.delivery': 'entrega',
  'timeline.status': '{from} → {to}',
  'timeline.event': 'Evento ao parceiro {partner}: {type}',
  'timeline.delivery': 'Entrega de “{type}”: {outcome}',
  'timeline.forAlert': '{text} (alerta nº {number})',
  'timeline.delivery.attempts.one': '1 tentativa',
  'timeline.delivery.attempts.other': '{count} tentativas',
  'eventType.ServiceOrder.Created': 'ordem criada',
  'eventType.ServiceOrder.Completed': 'ordem concluída',
  'eventType.ServiceOrder.StatusChanged': 'situação da ordem mudou',
  'eventType.ServiceOrder.Cancelled': 'ordem cancelada',
  'eventType.Alert.Cancelled': 'pedido descartado',
  'eventType.Test.Ping': 'evento de teste',
  'eventType.other': 'outro evento',
  'note.order': 'ordem {number}: {status}',
  'note.team': 'equipe {name}',
  'note.createdInTriage': 'criada na triagem do alerta #{number}',
  'note.createdAtIntake': 'criada ao receber o pedido {protocol}',
  'note.newOrder': 'nova ordem {number}',
  'note.linked': 'vinculado à ordem {number}',
  'note.demo': 'cidade de demonstração',
  'polling.active': 'Consultando',
  'polling.lastSuccessAt': 'Última consulta bem-sucedida',
  'polling.lag': 'Atraso',
  'polling.lagSeconds': '{seconds} s',
  'polling.failures': 'Falhas seguidas',
  'polling.lastError': 'Última falha',
  'pollError.http-status': 'o parceiro respondeu com erro',
  'pollError.timeout': 'o parceiro não respondeu a tempo',
  'pollError.network': 'falha de rede',
  'pollError.tls': 'falha na conexão segura (TLS)',
  'pollError.blocked-address': 'endereço não permitido',
  'pollError.too-large': 'resposta grande demais',
  'pollError.invalid-json': 'resposta ilegível',
  'pollError.invalid-envelope': 'resposta fora do formato combinado',
  'pollError.redirect': 'redirecionamento não aceito',
  'pollError.configuration': 'configuração incompleta',
  'pollError.intake': 'falha ao registrar um pedido (lido de novo depois)',
  'pollError.cursor-stalled': 'o parceiro disse que há mais, mas não avançou',
  'deliveryError.status': 'resposta {code}',
  'deliveryError.other': 'sem resposta (rede ou tempo esgotado)',
  'action.alert.partner-update': 'O parceiro mudou a descrição ou o local',
  'field.description': 'Descrição',
  'field.street': 'Rua',
  'field.neighborhood': 'Bairro',
  'field.reference': 'Referência',
  'conflict.title': 'Alguém agiu antes',
  'conflict.alert.Linked': 'Este alerta já foi vinculado à {number} por {actor}, {ago}.',
  'conflict.alert.Cancelled': 'Este alerta já foi descartado por {actor}, {ago}.',
  'conflict.alert.Resolved': 'Este alerta já foi resolvido, na última mudança por {actor}, {ago}.',
  'conflict.alert.other': 'Este alerta mudou por último por {actor}, {ago}: a página mostra como ele está agora.',
  'conflict.order.COMPLETED': 'Esta ordem já foi concluída por {actor}, {ago}.',
  'conflict.order.CANCELLED': 'Esta ordem já foi cancelada por {actor}, {ago}.',
  'conflict.order.other': 'Esta ordem mudou por último por {actor}, {ago} (agora: {status}).',
  'conflict.someone': 'outra pessoa',
  'conflict.justNow': 'agora há pouco',
  'conflict.ago': 'há {span}',
  'problem.forbidden': 'Seu papel nesta cidade não permite esta ação.',
  'orders.filter.allTeams': 'Todas',
  'audit.who': 'Quem (e-mail ou nome)',
  'audit.from': 'De',
  'audit.to': 'Até',
  'audit.number': 'Número do alerta ou da ordem',
  'audit.numberUnknown': 'Nenhum alerta ou ordem com o número {number} nesta cidade.',
  'audit.export': 'Exportar CSV',
  'problem.fields': 'Confira: {fields}.',
  'problem.field.body': 'o formulário',
  // Safe actions (issue 23 §2, §3): undo, refused items, failed photos.
  'action.alert.undo': 'Ação desfeita',
  'note.undone': 'desfeito a tempo; o parceiro não foi avisado',
  'action.service-order.undo': 'Cancelamento desfeito',
  'action.inbound.accept': 'Pedido recusado corrigido e aceito',
  'photoError.data-uri': 'Conteúdo enviado com prefixo data:',
  'photoError.invalid-base64': 'Conteúdo da foto ilegível',
  'photoError.empty': 'Foto vazia',
  'photoError.too-large': 'Foto maior que 5 MiB',
  'photoError.content-mismatch': 'O arquivo não é uma imagem JPEG, PNG ou WebP',
  'photoError.invalid-url': 'Endereço da foto inválido',
  'photoError.insecure-url': 'Endereço da foto sem HTTPS',
  'photoError.blocked-address': 'Endereço da foto não permitido (rede interna)',
  'photoError.download-failed': 'Não foi possível baixar a foto',
  'photoError.storage-failed': 'A foto não pôde ser guardada',
  'photoError.other': 'A foto não pôde ser guardada',
  'photoError.httpStatus': '(o servidor da foto respondeu {code})',
  'rejected.field.item': 'O pedido inteiro',
  'rejected.field.protocolNumber': 'Protocolo',
  'rejected.field.assetType': 'Tipo de ativo',
  'rejected.field.requestedAt': 'Data do pedido',
  'rejected.field.requester': 'Solicitante',
  'rejected.field.requester.name': 'Nome do solicitante',
  'rejected.field.requester.phone': 'Telefone',
  'rejected.field.lampType': 'Tipo de lâmpada',
  'rejected.field.reasonCode': 'Motivo do parceiro',
  'rejected.field.address': 'Endereço',
  'rejected.field.address.street': 'Rua',
  'rejected.field.address.number': 'Número',
  'rejected.field.address.neighborhood': 'Bairro',
  'rejected.field.address.reference': 'Referência',
  'rejected.field.address.latitude': 'Latitude',
  'rejected.field.address.longitude': 'Longitude',
  'rejected.field.problem': 'Problema',
  'rejected.field.problem.description': 'Descrição',
  'rejected.field.problem.additionalNotes': 'Observações',
  'rejected.field.attachments': 'Fotos',
  'rejected.why.missing': '{field}: está faltando',
  'rejected.why.empty': '{field}: está vazio',
  'rejected.why.invalid': '{field}: não é válido',
  'rejected.why.unknown': '{field}: campo que o Lumen não conhece',
  'rejected.problem.validation-failed': 'Dados do pedido incompletos ou inválidos',
  'rejected.problem.forbidden': 'O parceiro não tem permissão para criar pedidos',
  'rejected.problem.other': 'Recusado pela entrada de pedidos',
} as const;

export type WordKey = keyof typeof WORDS_PT;

export const WORDS_EN: Record<WordKey, string> = {
  'action.admin-token.create': 'Access token created',
  'action.admin-token.revoke': 'Access token revoked',
  'action.alert.create-order': 'Service order created from the alert',
  'action.alert.discard': 'Alert discarded',
  'action.alert.link': 'Alert linked to an order',
  'action.alert.reclassify': 'Alert reason changed',
  'action.alert.set-location': 'Alert location set',
  'action.attachment.dismiss': 'Failed photo dismissed',
  'action.attachment.retry': 'Photo download tried again',
  'action.inbound.dismiss': 'Refused request dismissed',
  'action.inbound.retry': 'Refused request tried again',
  'action.operator.create': 'Operator created',
  'action.operator.set-password': 'Operator password set',
  'action.operator.reset-password': 'Operator password reset by Lumen',
  'action.operator.disable': 'Operator disabled',
  'action.operator.enable': 'Operator enabled again',
  'action.operator.grant': 'Role granted',
  'action.operator.revoke': 'Role revoked',
  'action.operator.platform-admin': 'Platform administration changed',
  'action.partner.create': 'Partner registered',
  'action.partner.poll-now': 'Poll of the partner requested',
  'action.partner.rotate-key': 'API key rotated',
  'action.partner.rotate-secret': 'Webhook secret rotated',
  'action.partner.update': 'Partner settings changed',
  'action.reason.apply-mapping': 'Reason mapping applied to waiting alerts',
  'action.reason.create': 'Reason created',
  'action.reason.map': 'Partner code mapped',
  'action.reason.unmap': 'Code mapping removed',
  'action.service-order.assign': 'Order assigned to a team',
  'action.service-order.start': 'Order started',
  'action.service-order.complete': 'Order completed',
  'action.service-order.cancel': 'Order cancelled',
  'action.service-order.set-pole': 'Order pole set',
  'action.session.password-refused': 'Password change refused',
  'action.session.sign-in': 'Signed in to the console',
  'action.session.sign-in-failed': 'Sign-in refused',
  'action.session.sign-out': 'Signed out of the console',
  'action.team.create': 'Team created',
  'action.team.member-add': 'Team member added',
  'action.team.member-remove': 'Team member removed',
  'action.service-order.plan-visit': 'Visit planned',
  'action.service-order.clear-visit': 'Planned visit removed',
  'action.tenant.create': 'City registered',
  'action.tenant.lamp-out-policy': 'Lamp-out rule changed',
  'action.tenant.set-alert-grouping': 'Alert grouping changed',
  'action.tenant.set-extent': 'City area changed',
  'action.tenant.set-intake': 'Intake mode changed',
  'action.webhook.redeliver': 'Event sent to the partner again',
  'action.webhook.redeliver-dead': 'Given-up deliveries sent again',
  'action.webhook.redeliver-since': 'Events sent again since a date',
  'action.webhook.test-event': 'Test event sent',
  'action.other': 'Action recorded',
  'entity.alert': 'Alert',
  'entity.service_order': 'Service order',
  'entity.partner': 'Partner',
  'entity.team': 'Team',
  'entity.tenant': 'City',
  'entity.admin_token': 'Access token',
  'entity.operator': 'Operator',
  'actor.intake': 'Received from the partner',
  'actor.lumen': 'Lumen (automatic)',
  'actor.token': 'token {name}',
  'actor.cli': 'command line ({name})',
  'actor.partner': 'partner {name}',
  'actor.sandbox': 'partner {name} (test)',
  'field.status': 'Status',
  'field.serviceOrderId': 'Service order',
  'field.reasonCode': 'Reason',
  'field.priority': 'Priority',
  'field.slaDueAt': 'Deadline',
  'field.latitude': 'Latitude',
  'field.longitude': 'Longitude',
  'field.locationSource': 'Location from',
  'field.cancelReason': 'Discard reason',
  'field.number': 'Number',
  'field.teamId': 'Team',
  'field.closedAt': 'Closed at',
  'field.alerts': 'Alerts',
  'field.keyPrefix': 'API key',
  'field.previousKeyExpiresAt': 'Previous key works until',
  'field.previousWebhookSecretUntil': 'Previous secret signs until',
  'field.intakePolicy': 'Intake mode',
  'field.extent': 'City area',
  'field.extentSource': 'Area from',
  'field.locationCheckMeters': 'Greatest distance from a pole',
  'field.duplicateRadiusMeters': 'Distance for duplicates',
  'field.duplicateWindowHours': 'Window for duplicates',
  'field.supplyFaultRadiusMeters': 'Distance for a supply fault',
  'field.supplyFaultWindowMinutes': 'Window for a supply fault',
  'field.enabled': 'Enabled',
  'field.scopes': 'Scopes',
  'field.webhookUrl': 'Webhook URL',
  'field.transport': 'Event transport',
  'field.rateLimitPerMinute': 'Limit per minute',
  'field.poleId': 'Pole',
  'field.role': 'Role',
  'field.reason': 'Note to the partner',
  'field.note': 'Note',
  'field.name': 'Name',
  'field.email': 'E-mail',
  'field.code': 'Code',
  'field.namePt': 'Name in Portuguese',
  'field.nameEn': 'Name in English',
  'field.slaHours': 'Deadline in hours',
  'field.password': 'Password',
  'field.webhookSecret': 'Webhook secret',
  'field.text': 'Search',
  'field.north': 'North',
  'field.south': 'South',
  'field.east': 'East',
  'field.west': 'West',
  'field.serviceOrderNumber': 'Order number',
  'field.serviceOrder': 'Service order',
  'field.signature': 'Webhook signature',
  'field.createdAt': 'Created at',
  'field.updatedAt': 'Changed at',
  'field.webhookSecretSet': 'Webhook secret set',
  'field.pollingUrl': 'Polling address',
  'field.pollingKeySet': 'Polling key set',
  'field.pollingIntervalSeconds': 'Polling interval (s)',
  'field.eventTypes': 'Event types',
  'field.eventsMinIntervalSeconds': 'Least events interval (s)',
  'field.previousKey': 'Previous key',
  'field.grants': 'Roles',
  'field.platformAdmin': 'Platform administration',
  'field.count': 'Deliveries',
  'field.eventId': 'Event',
  'field.deliveryId': 'Delivery',
  'field.redeliveryOf': 'Redelivery of',
  'field.since': 'Since',
  'field.partnerCode': "Partner's code",
  'field.reclassified': 'Alerts reclassified',
  'field.active': 'Active',
  'field.accepted': 'Accepted',
  'field.stored': 'Stored',
  'field.url': 'Address',
  'field.kind': 'Kind',
  'field.wattage': 'Wattage (W)',
  'field.materialId': 'Material',
  'field.operatorId': 'Operator',
  'field.sessionId': 'Session',
  'field.attachmentId': 'Photo',
  'field.itemId': 'Received item',
  'field.failureId': 'Failure',
  'field.errorCode': 'Error',
  'field.problemCode': 'Problem',
  'field.protocolNumber': 'Protocol',
  'field.startsAt': 'Starts',
  'field.endsAt': 'Ends',
  'field.ibgeCode': 'IBGE code',
  'field.sandbox': 'Test city',
  'value.signature.both': 'both (Standard Webhooks and Lumen)',
  'value.signature.standard': 'Standard Webhooks',
  'value.signature.lumen': 'Lumen',
  'field.other': 'Other detail',
  'value.set': 'set',
  'value.none': 'none',
  'value.yes': 'yes',
  'value.no': 'no',
  'value.alerts.one': '1 alert',
  'value.alerts.other': '{count} alerts',
  'locationSource.payload': 'sent by the partner',
  'locationSource.poles': 'from the city’s poles',
  'locationSource.geocoder': 'from the geocoder',
  'locationSource.operator': 'set by an operator',
  'timeline.kind.status': 'status',
  'timeline.kind.audit': 'action',
  'timeline.kind.event': 'event',
  'timeline.kind.delivery': 'delivery',
  'timeline.status': '{from} → {to}',
  'timeline.event': 'Event to partner {partner}: {type}',
  'timeline.delivery': 'Delivery of “{type}”: {outcome}',
  'timeline.forAlert': '{text} (alert #{number})',
  'timeline.delivery.attempts.one': '1 attempt',
  'timeline.delivery.attempts.other': '{count} attempts',
  'eventType.ServiceOrder.Created': 'order created',
  'eventType.ServiceOrder.Completed': 'order completed',
  'eventType.ServiceOrder.StatusChanged': 'order status changed',
  'eventType.ServiceOrder.Cancelled': 'order cancelled',
  'eventType.Alert.Cancelled': 'request discarded',
  'eventType.Test.Ping': 'test event',
  'eventType.other': 'another event',
  'note.order': 'order {number}: {status}',
  'note.team': 'team {name}',
  'note.createdInTriage': 'created in triage from alert #{number}',
  'note.createdAtIntake': 'created when request {protocol} arrived',
  'note.newOrder': 'new order {number}',
  'note.linked': 'linked to order {number}',
  'note.demo': 'demo city',
  'polling.active': 'Polling',
  'polling.lastSuccessAt': 'Last successful poll',
  'polling.lag': 'Lag',
  'polling.lagSeconds': '{seconds} s',
  'polling.failures': 'Failures in a row',
  'polling.lastError': 'Last failure',
  'pollError.http-status': 'the partner answered with an error',
  'pollError.timeout': 'the partner did not answer in time',
  'pollError.network': 'network failure',
  'pollError.tls': 'secure connection (TLS) failed',
  'pollError.blocked-address': 'address not allowed',
  'pollError.too-large': 'answer too large',
  'pollError.invalid-json': 'unreadable answer',
  'pollError.invalid-envelope': 'answer not in the agreed shape',
  'pollError.redirect': 'redirect not accepted',
  'pollError.configuration': 'configuration incomplete',
  'pollError.intake': 'a request could not be registered (read again later)',
  'pollError.cursor-stalled': 'the partner said there was more but did not move on',
  'deliveryError.status': 'answer {code}',
  'deliveryError.other': 'no answer (network or timeout)',
  'action.alert.partner-update': 'The partner changed the description or the place',
  'field.description': 'Description',
  'field.street': 'Street',
  'field.neighborhood': 'Neighbourhood',
  'field.reference': 'Reference',
  'conflict.title': 'Someone acted first',
  'conflict.alert.Linked': 'This alert was already linked to {number} by {actor}, {ago}.',
  'conflict.alert.Cancelled': 'This alert was already discarded by {actor}, {ago}.',
  'conflict.alert.Resolved': 'This alert is already resolved; last changed by {actor}, {ago}.',
  'conflict.alert.other': 'This alert was last changed by {actor}, {ago}: the page shows it as it is now.',
  'conflict.order.COMPLETED': 'This order was already completed by {actor}, {ago}.',
  'conflict.order.CANCELLED': 'This order was already cancelled by {actor}, {ago}.',
  'conflict.order.other': 'This order was last changed by {actor}, {ago} (now: {status}).',
  'conflict.someone': 'someone else',
  'conflict.justNow': 'just now',
  'conflict.ago': '{span} ago',
  'problem.forbidden': 'Your role in this city does not allow this.',
  'orders.filter.allTeams': 'All',
  'audit.who': 'Who (e-mail or name)',
  'audit.from': 'From',
  'audit.to': 'To',
  'audit.number': 'Alert or order number',
  'audit.numberUnknown': 'No alert or order numbered {number} in this city.',
  'audit.export': 'Export CSV',
  'problem.fields': 'Check: {fields}.',
  'problem.field.body': 'the form',
  // Safe actions (issue 23 §2, §3): undo, refused items, failed photos.
  'action.alert.undo': 'Action undone',
  'note.undone': 'undone in time; the partner was not told',
  'action.service-order.undo': 'Cancellation undone',
  'action.inbound.accept': 'Refused request corrected and accepted',
  'photoError.data-uri': 'Content sent with a data: prefix',
  'photoError.invalid-base64': 'Unreadable photo content',
  'photoError.empty': 'Empty photo',
  'photoError.too-large': 'Photo larger than 5 MiB',
  'photoError.content-mismatch': 'The file is not a JPEG, PNG or WebP image',
  'photoError.invalid-url': 'Invalid photo address',
  'photoError.insecure-url': 'Photo address without HTTPS',
  'photoError.blocked-address': 'Photo address not allowed (internal network)',
  'photoError.download-failed': 'The photo could not be downloaded',
  'photoError.storage-failed': 'The photo could not be stored',
  'photoError.other': 'The photo could not be stored',
  'photoError.httpStatus': "(the photo's server answered {code})",
  'rejected.field.item': 'The whole request',
  'rejected.field.protocolNumber': 'Protocol',
  'rejected.field.assetType': 'Asset type',
  'rejected.field.requestedAt': 'Request date',
  'rejected.field.requester': 'Requester',
  'rejected.field.requester.name': "Requester's name",
  'rejected.field.requester.phone': 'Phone',
  'rejected.field.lampType': 'Lamp type',
  'rejected.field.reasonCode': "Partner's reason",
  'rejected.field.address': 'Address',
  'rejected.field.address.street': 'Street',
  'rejected.field.address.number': 'Number',
  'rejected.field.address.neighborhood': 'Neighbourhood',
  'rejected.field.address.reference': 'Reference',
  'rejected.field.address.latitude': 'Latitude',
  'rejected.field.address.longitude': 'Longitude',
  'rejected.field.problem': 'Problem',
  'rejected.field.problem.description': 'Description',
  'rejected.field.problem.additionalNotes': 'Notes',
  'rejected.field.attachments': 'Photos',
  'rejected.why.missing': '{field}: missing',
  'rejected.why.empty': '{field}: empty',
  'rejected.why.invalid': '{field}: not valid',
  'rejected.why.unknown': '{field}: a field Lumen does not know',
  'rejected.problem.validation-failed': 'Request data incomplete or not valid',
  'rejected.problem.forbidden': 'The partner may not create requests',
  'rejected.problem.other': 'Refused by request intake',
};

type T = (key: never, params?: Record<string, string | number>) => string;

const has = (key: string): key is WordKey => Object.hasOwn(WORDS_PT, key);

/** An audit action (`service-order.complete`) in words. */
export function actionWords(t: T, action: string): string {
  const key = `action.${action}`;
  return (t as (k: string) => string)(has(key) ? key : 'action.other');
}

/** The kind of an audited object (`service_order`) in words. */
export function entityWords(t: T, type: string): string {
  const key = `entity.${type}`;
  return has(key) ? (t as (k: string) => string)(key) : (t as (k: string) => string)('field.other');
}

/** Who did something, from the API's `kind:name` label: an operator's e-mail as it is, a token, the command line, a partner. */
export function actorWords(t: T, actor: string | null): string {
  const tt = t as (k: string, p?: Record<string, string>) => string;
  if (actor === null) return tt('actor.lumen');
  if (actor === 'intake') return tt('actor.intake');
  const i = actor.indexOf(':');
  if (i < 0) return actor;
  const kind = actor.slice(0, i);
  const name = actor.slice(i + 1);
  if (kind === 'operator') return name;
  if (kind === 'admin-token') return tt('actor.token', { name });
  if (kind === 'cli') return tt('actor.cli', { name });
  if (kind === 'partner') return tt('actor.partner', { name });
  if (kind === 'sandbox') return tt('actor.sandbox', { name });
  return name;
}

/** A status of an alert or an order in words (`status.OPEN`), or the value as it is when unknown. */
export function statusWords(t: T, status: unknown): string {
  const tt = t as (k: string) => string;
  return typeof status === 'string' && (STATUSES as readonly string[]).includes(status) ? tt(`status.${status}`) : String(status ?? '—');
}

const STATUSES = ['Pending', 'Linked', 'Resolved', 'Cancelled', 'OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'] as const;
const PRIORITIES = ['Low', 'Medium', 'High', 'Critical'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** A field of a before/after in words; null for one the operator has nothing to read in. */
export function fieldWords(t: T, field: string): string {
  const key = `field.${field}`;
  return (t as (k: string) => string)(has(key) ? key : 'field.other');
}

/** A value of a before/after in words: statuses, priorities, dates, yes/no; ids say only whether one is set. */
export function valueWords(t: T, dateTime: (iso: string | null) => string, field: string, v: unknown): string {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  if (v === null || v === undefined || v === '') return tt('value.none');
  if (field === 'status') return statusWords(t, v);
  if (field === 'priority' && (PRIORITIES as readonly string[]).includes(String(v))) return tt(`priority.${String(v)}`);
  if (field === 'locationSource' && has(`locationSource.${String(v)}`)) return tt(`locationSource.${String(v)}`);
  if (typeof v === 'boolean') return tt(v ? 'value.yes' : 'value.no');
  if (field === 'signature' && has(`value.signature.${String(v)}`)) return tt(`value.signature.${String(v)}`);
  if (field === 'transport' && (v === 'webhook' || v === 'polling')) return tt(`partners.transport.${v}`);
  if (field === 'scopes' && Array.isArray(v)) return v.map((x) => tt(`scope.${String(x)}`)).join('; ');
  if (field === 'eventTypes' && Array.isArray(v)) return v.map((x) => eventTypeWords(t, String(x))).join(', ');
  if (Array.isArray(v)) return field === 'alerts' ? tt(v.length === 1 ? 'value.alerts.one' : 'value.alerts.other', { count: v.length }) : v.map(String).join(', ');
  // A nested record: an order's snapshot names the order by its number.
  if (typeof v === 'object' && typeof (v as { number?: unknown }).number === 'string') return (v as { number: string }).number;
  if (typeof v === 'string' && UUID.test(v)) return tt('value.set');
  if (typeof v === 'string' && INSTANT.test(v)) return dateTime(v);
  if (typeof v === 'object') return tt('value.set');
  return String(v);
}

/** What a timeline entry says, in words. */
/**
 * An entry of a timeline in words. `ofOrder`: an order's timeline, which holds the events
 * of each of its alerts, so an event and its delivery say which alert they are about.
 */
export function timelineWords(t: T, e: types.TimelineEntry, ofOrder = false): string {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  const data = (e.data ?? {}) as Record<string, unknown>;
  if (e.kind === 'status') return data.from ? tt('timeline.status', { from: statusWords(t, data.from), to: statusWords(t, data.to) }) : statusWords(t, data.to);
  if (e.kind === 'audit') return actionWords(t, e.title);
  const forAlert = (text: string) => (ofOrder && typeof data.alertNumber === 'number' ? tt('timeline.forAlert', { text, number: data.alertNumber }) : text);
  if (e.kind === 'event') return forAlert(tt('timeline.event', { partner: String(data.partner ?? ''), type: eventTypeWords(t, e.title) }));
  const type = e.title.replace(/ delivery \w+$/, '');
  const outcome = ['pending', 'failed', 'succeeded', 'dead'].includes(String(data.status)) ? tt(`delivery.${String(data.status)}`) : tt('eventType.other');
  const attempts = typeof data.attempts === 'number' && data.attempts > 0 ? ` · ${tt(data.attempts === 1 ? 'timeline.delivery.attempts.one' : 'timeline.delivery.attempts.other', { count: data.attempts })}` : '';
  const answer = typeof data.lastStatusCode === 'number' ? ` · ${tt('deliveryError.status', { code: data.lastStatusCode })}` : '';
  return forAlert(`${tt('timeline.delivery', { type: eventTypeWords(t, type), outcome })}${attempts}${answer}`);
}

/** An event type (`ServiceOrder.Created`) in words. */
export function eventTypeWords(t: T, type: string): string {
  const key = `eventType.${type}`;
  return (t as (k: string) => string)(has(key) ? key : 'eventType.other');
}

/** Whether `text` begins with the word `word` (any case), followed by a space or its end: 'Equipe Noturna' already says it is a team. */
export function startsWithWord(text: string, word: string): boolean {
  const head = text.slice(0, word.length);
  return head.toLocaleLowerCase() === word.toLocaleLowerCase() && (text.length === word.length || text[word.length] === ' ');
}

/**
 * A status change's note: Lumen's own phrases (written by the API in English, for logs
 * and the CLI) in the operator's words; anything else is an operator's or a partner's
 * own text, shown as written.
 */
export function noteWords(t: T, note: string): string {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  let m: RegExpExecArray | null;
  if ((m = /^order (\S+) ([A-Z_]+)$/.exec(note))) return tt('note.order', { number: m[1]!, status: statusWords(t, m[2]) });
  if ((m = /^created in triage from alert (\d+)$/.exec(note))) return tt('note.createdInTriage', { number: m[1]! });
  if ((m = /^created at intake of (.+)$/.exec(note))) return tt('note.createdAtIntake', { protocol: m[1]! });
  if ((m = /^new order (\S+)$/.exec(note))) return tt('note.newOrder', { number: m[1]! });
  if ((m = /^linked to order (\S+)$/.exec(note))) return tt('note.linked', { number: m[1]! });
  if ((m = /^team (.+)$/.exec(note))) return startsWithWord(m[1]!, tt('entity.team')) ? m[1]! : tt('note.team', { name: m[1]! });
  if (note === 'demo city') return tt('note.demo');
  if (note === 'undone') return tt('note.undone');
  return note;
}

/** Why a poll of the partner failed, in words (the kind; the partner's own message is shown beside it). */
export function pollErrorWords(t: T, kind: string): string {
  const key = `pollError.${kind}`;
  return has(key) ? (t as (k: string) => string)(key) : kind;
}

/**
 * Why Lumen does not poll a partner, in words: the same rule as the server's
 * (services/partner-poll notPolledBecause), read from the partner's settings.
 */
export function notPolledWords(t: T, p: { transport: string; enabled: boolean; pollingUrl: string | null }): string {
  const tt = t as (k: string) => string;
  if (p.transport !== 'polling') return tt('partnerPolling.notPolled.webhook');
  if (!p.enabled) return tt('partnerPolling.notPolled.disabled');
  if (!p.pollingUrl) return tt('partnerPolling.notPolled.noUrl');
  return tt('common.no');
}

/** Why a photo could not be kept, in words: the error code's, and the server's answer when it gave one. */
export function attachmentErrorWords(t: T, code: string, detail: string | null): string {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  const what = has(`photoError.${code}`) ? tt(`photoError.${code}`) : tt('photoError.other');
  const status = /\bHTTP (\d{3})\b/.exec(detail ?? '');
  return status ? `${what} ${tt('photoError.httpStatus', { code: status[1]! })}` : what;
}

/** A refused item's field, as the correction form labels it (`/address/street` → "Rua"). */
export function rejectedFieldWords(t: T, pointer: string): string {
  const tt = t as (k: string) => string;
  const parts = pointer.split('/').filter(Boolean).filter((p) => !/^\d+$/.test(p));
  if (parts.length === 0) return tt('rejected.field.item');
  const path = parts.join('.');
  for (const candidate of [path, parts[0]!]) if (has(`rejected.field.${candidate}`)) return tt(`rejected.field.${candidate}`);
  return tt('field.other');
}

/** Why intake refused a field, in words: missing, empty, or not valid (never the validator's sentence). */
export function rejectedReasonWords(t: T, reason: { pointer: string; message: string }, item: unknown): string {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  const field = rejectedFieldWords(t, reason.pointer);
  let value: unknown = item;
  for (const part of reason.pointer.split('/').filter(Boolean)) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  const kind = /is required|required property/.test(reason.message) ? 'missing' : value === '' ? 'empty' : /not a property/.test(reason.message) ? 'unknown' : 'invalid';
  return tt(`rejected.why.${kind}`, { field });
}

/** The problem intake answered for a refused item, in words. */
export function rejectedProblemWords(t: T, code: string): string {
  const tt = t as (k: string) => string;
  return has(`rejected.problem.${code}`) ? tt(`rejected.problem.${code}`) : tt('rejected.problem.other');
}

/** A delivery's last outcome: the receiver's HTTP status, or that nothing answered. */
export function deliveryErrorWords(t: T, statusCode: number | null, error: string | null): string {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  if (statusCode !== null) return tt('deliveryError.status', { code: statusCode });
  return error ? tt('deliveryError.other') : '—';
}

/**
 * A problem from the API in the operator's words: the API's title and detail are
 * already in the operator's language; a refusal for a role says so as a person reads
 * it, and a validation problem names the fields as the forms label them, never a JSON
 * pointer or a pattern.
 */
export function problemWords(t: T, err: { code: string; title: string; detail: string; errors: { pointer: string; message: string }[] }): { title: string; detail: string } {
  const tt = t as (k: string, p?: Record<string, string | number>) => string;
  if (err.code === 'forbidden') return { title: err.title, detail: tt('problem.forbidden') };
  if ((err.code === 'validation-failed' || err.code === 'invalid-parameter') && err.errors.length > 0) {
    const fields = [...new Set(err.errors.map((e) => fieldOfPointer(t, e.pointer)))];
    return { title: err.title, detail: tt('problem.fields', { fields: fields.join(', ') }) };
  }
  return { title: err.title, detail: err.detail };
}

/** `/reasonCode`, `/query/text`, `/extent/north` → the field's words. */
function fieldOfPointer(t: T, pointer: string): string {
  const parts = pointer.split('/').filter(Boolean).filter((p) => p !== 'query' && p !== 'header' && !/^\d+$/.test(p));
  const last = parts[parts.length - 1];
  if (!last) return (t as (k: string) => string)('problem.field.body');
  return has(`field.${last}`) ? (t as (k: string) => string)(`field.${last}`) : (t as (k: string) => string)('field.other');
}

/** Fields of a before/after that say nothing to an operator (ids, the city itself): left out. */
export const QUIET_FIELDS: ReadonlySet<string> = new Set(['id', 'tenantId', 'alertId', 'operatorId', 'tokenId']);
