/** Every entity, listed explicitly (no folder discovery). */
import { Api } from './api.entity.js';
import { ApiKey } from './api-key.entity.js';
import { ApiRevision } from './api-revision.entity.js';
import { ApiSearch } from './api-search.entity.js';
import { SearchLexicon } from './search-lexicon.entity.js';
import { Avatar } from './avatar.entity.js';
import { ApiRequest, ApiRequestVote } from './api-request.entity.js';
import {
  ApiConsumerHour,
  ApiRank,
  ApiScore,
  ApiScoreHistory,
  ApiStats,
  ApiUsageHourly,
  EndpointPriceSeen,
  MarketEvent,
  RollupState,
} from './catalog-rollups.entity.js';
import { Category } from './category.entity.js';
import { Document } from './document.entity.js';
import { EarningAccrual } from './earning-accrual.entity.js';
import { EmailVerification } from './email-verification.entity.js';
import { Endpoint } from './endpoint.entity.js';
import { IdempotencyRecord } from './idempotency-record.entity.js';
import { IdempotencyUnsynced } from './idempotency-unsynced.entity.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { LoginCode } from './login-code.entity.js';
import { McpInstalledTool } from './mcp-installed-tool.entity.js';
import { McpSessionRecord } from './mcp-session.entity.js';
import { OAuthPayload } from './oauth-payload.entity.js';
import { Org } from './org.entity.js';
import { Payment } from './payment.entity.js';
import { Payout } from './payout.entity.js';
import { Profile } from './profile.entity.js';
import { RemovedEndpoint } from './removed-endpoint.entity.js';
import { Session } from './session.entity.js';
import { StripeEvent } from './stripe-event.entity.js';
import { TermsAcceptance } from './terms-acceptance.entity.js';
import { UsageBatch } from './usage-batch.entity.js';
import { UsageEvent } from './usage-event.entity.js';
import { User } from './user.entity.js';

export {
  Api,
  ApiRevision,
  ApiConsumerHour,
  ApiRank,
  ApiRequest,
  ApiRequestVote,
  ApiScore,
  ApiScoreHistory,
  ApiStats,
  ApiUsageHourly,
  EndpointPriceSeen,
  MarketEvent,
  RollupState,
  ApiKey,
  ApiSearch,
  Avatar,
  Category,
  Document,
  EarningAccrual,
  EmailVerification,
  Endpoint,
  IdempotencyRecord,
  IdempotencyUnsynced,
  LedgerEntry,
  LoginCode,
  McpInstalledTool,
  McpSessionRecord,
  Org,
  Payment,
  Payout,
  Profile,
  RemovedEndpoint,
  SearchLexicon,
  Session,
  StripeEvent,
  TermsAcceptance,
  UsageBatch,
  UsageEvent,
  User,
};
export * from './api.entity.js';
export * from './api-key.entity.js';
export * from './api-revision.entity.js';
export * from './api-search.entity.js';
export * from './avatar.entity.js';
export * from './api-request.entity.js';
export * from './catalog-rollups.entity.js';
export * from './category.entity.js';
export * from './document.entity.js';
export * from './email-verification.entity.js';
export * from './earning-accrual.entity.js';
export * from './endpoint.entity.js';
export * from './idempotency-record.entity.js';
export * from './ledger-entry.entity.js';
export * from './login-code.entity.js';
export * from './mcp-installed-tool.entity.js';
export * from './mcp-session.entity.js';
export * from './oauth-payload.entity.js';
export * from './org.entity.js';
export * from './payment.entity.js';
export * from './payout.entity.js';
export * from './profile.entity.js';
export * from './removed-endpoint.entity.js';
export * from './search-lexicon.entity.js';
export * from './session.entity.js';
export * from './stripe-event.entity.js';
export * from './terms-acceptance.entity.js';
export * from './usage-batch.entity.js';
export * from './usage-event.entity.js';
export * from './user.entity.js';

export const ENTITIES = [
  Org,
  User,
  ApiKey,
  LedgerEntry,
  Session,
  LoginCode,
  EmailVerification,
  Avatar,
  Profile,
  UsageEvent,
  UsageBatch,
  Api,
  Endpoint,
  RemovedEndpoint,
  ApiRevision,
  Document,
  TermsAcceptance,
  StripeEvent,
  Payment,
  Payout,
  IdempotencyRecord,
  IdempotencyUnsynced,
  EarningAccrual,
  Category,
  ApiUsageHourly,
  ApiConsumerHour,
  ApiStats,
  ApiScore,
  ApiScoreHistory,
  ApiRank,
  RollupState,
  EndpointPriceSeen,
  MarketEvent,
  ApiRequest,
  ApiRequestVote,
  OAuthPayload,
  ApiSearch,
  SearchLexicon,
  McpInstalledTool,
  McpSessionRecord,
];
