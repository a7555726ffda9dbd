/** Money in the API: a non-negative integer number of cents (the input schema every amount field uses). */
import { z } from 'zod';

export const Cents = z.number().int('must be an integer number of cents').min(0).max(1_000_000_000_000);
