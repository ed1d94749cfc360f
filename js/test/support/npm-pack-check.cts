// The CommonJS half of npm-pack-check.mts.
import tersa = require('tersa');
import tersaExpress = require('tersa/express');

const bytes: Uint8Array = tersa.encode([1, 2]);
const mediaType: string = tersaExpress.MEDIA_TYPE;
export = [tersa.decode(bytes), mediaType, tersaExpress.parser({ limit: 10 })];
