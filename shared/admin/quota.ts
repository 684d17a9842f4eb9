import type { Stage } from '#shared/config';
import { getQuota, setQuotaOverride } from '#shared/db/entities/quota';
import { DEFAULT_QUOTAS, quotaValueRefusal } from '#shared/quota/policy';
import { AdminError, requireMerchant } from './operations';
import type { Store } from './store';

/** `npm run admin -- quota`: a merchant's own quota, or back to the stage's default, without a deploy; prints what is in effect. */
export const setMerchantQuota = async (
  store: Store,
  stage: Stage,
  options: { merchantId: string; rate?: string; burst?: string; reset: boolean },
) => {
  await requireMerchant(store, options.merchantId);
  if (options.reset) {
    if (options.rate !== undefined || options.burst !== undefined) throw new AdminError('--reset takes no --rate or --burst');
    await setQuotaOverride(store, options.merchantId, undefined);
  } else {
    const refusal = quotaValueRefusal('rate', options.rate) ?? quotaValueRefusal('burst', options.burst);
    if (refusal) throw new AdminError(refusal);
    await setQuotaOverride(store, options.merchantId, { rate: Number(options.rate), burst: Number(options.burst) });
  }
  const stored = await getQuota(store, options.merchantId);
  const own = stored?.rate !== undefined && stored.burst !== undefined;
  return {
    merchant_id: options.merchantId,
    rate_per_second: own ? stored.rate : DEFAULT_QUOTAS[stage].rate,
    burst: own ? stored.burst : DEFAULT_QUOTAS[stage].burst,
    source: own ? 'merchant' : 'stage default',
  };
};
