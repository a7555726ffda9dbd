# One image for every process; the command picks the role (api | gateway | mcp | worker | all).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY api ./api
COPY activities ./activities
COPY core ./core
COPY platform ./platform
COPY db ./db
COPY gateway ./gateway
COPY mcp ./mcp
COPY scripts ./scripts
COPY workflows ./workflows
USER node
EXPOSE 3000 3001 3002
ENTRYPOINT ["node", "--import", "tsx", "scripts/start.ts"]
CMD ["all"]
