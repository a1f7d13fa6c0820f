/** The `chains[].expressLane` section as read with no field set (its defaults), for tests that build one by hand. */
import { Reader } from '../../src/base/config-reader.js';
import { readSection } from '../../src/base/config-fields.js';
import { EXPRESS_LANE, type ExpressLaneConfig } from '../../src/express-lane/config.js';

export const EXPRESS_LANE_DEFAULTS: ExpressLaneConfig = readSection(new Reader(), EXPRESS_LANE, {}, 'expressLane', 'expressLane.', { baseDir: '/', env: {} });
