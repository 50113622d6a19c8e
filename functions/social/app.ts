import { createRouter } from '../../lib/app'
import * as post from './routes/post'

/** Social posts made by agents (spec 2 "Social posts", "Limits"). */
export const app = createRouter().openapi(post.route, post.handler)
